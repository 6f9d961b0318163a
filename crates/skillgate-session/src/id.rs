//! Session ids: 32 lowercase hex digits from the operating system's random source.

/// A new random session id.
pub fn new() -> Result<String, String> {
    let mut b = [0u8; 16];
    getrandom::fill(&mut b).map_err(|e| format!("no randomness for a session id: {e}"))?;
    Ok(hex::encode(b))
}

/// `Ok` for a well-formed id (it names files and locks: nothing else is accepted).
pub fn check(id: &str) -> Result<(), String> {
    if id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        Ok(())
    } else {
        Err(format!(
            "`{id}` is not a session id (32 lowercase hex digits, as `session new` prints)"
        ))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn new_ids_are_well_formed_and_others_are_refused() {
        let id = super::new().unwrap();
        assert!(super::check(&id).is_ok());
        assert_ne!(id, super::new().unwrap());
        for bad in ["", "../x", &id.to_uppercase(), &id[1..], &format!("{id}0")] {
            assert!(super::check(bad).is_err(), "{bad}");
        }
    }
}

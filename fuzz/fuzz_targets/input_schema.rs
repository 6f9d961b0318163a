//! The input gate: a JSON Schema (the bytes before the first NUL, through the skill
//! loader's `parse_schema`) and an input JSON (the bytes after it) through `check_input`.
//! A schema that loads either accepts the input or refuses it with findings.
//! Seeds: the `input.schema.json` of every skill folder, with an input each.
#![no_main]
use libfuzzer_sys::fuzz_target;
use skillgate::skill_dir::parse_schema;

fuzz_target!(|data: &[u8]| {
    let (schema, input) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(schema) = parse_schema(schema, "input.schema.json".as_ref()) else {
        return;
    };
    let Ok(input) = serde_json::from_slice::<serde_json::Value>(input) else {
        return;
    };
    if let Err((_, findings)) = skillgate::check_input(&schema, &input) {
        assert!(!findings.is_empty(), "refused without a finding");
    }
});

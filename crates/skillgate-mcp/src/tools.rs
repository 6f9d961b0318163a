//! Skills as MCP tools: the tool an agent sees for a skill it may run.
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use skillgate::Skill;
use skillgate::skill_dir::EffectHints;

/// The MCP tool for `skill`: its name, its description, its input schema as
/// `inputSchema`, and the annotations its `SKILL.md` gives (`skillgate.read-only`,
/// `skillgate.destructive`). `None` when its schema cannot describe MCP arguments (see
/// [`input_schema`]).
pub fn tool_of(skill: &Skill) -> Option<Tool> {
    let schema = input_schema(skill)?;
    let mut tool = Tool::new(skill.name.clone(), skill.description.clone(), schema);
    let hints = EffectHints::of_skill(skill);
    if hints != EffectHints::default() {
        let mut annotations = ToolAnnotations::new();
        if let Some(read_only) = hints.read_only {
            annotations = annotations.read_only(read_only);
        }
        if let Some(destructive) = hints.destructive {
            annotations = annotations.destructive(destructive);
        }
        tool = tool.with_annotations(annotations);
    }
    Some(tool)
}

/// A skill's input schema as an MCP `inputSchema`, which must describe an object (a
/// tool's arguments are always one): the skill's schema when its `type` is `object`,
/// with `"type": "object"` added when it names no type (the arguments are an object
/// anyway), `{"type": "object"}` for a skill without a schema. `None` for a schema of
/// another type or one that is not an object: such a skill cannot be called with MCP
/// arguments, so it is no tool.
pub fn input_schema(skill: &Skill) -> Option<JsonObject> {
    let Some(schema) = &skill.input_schema else {
        let mut object = JsonObject::new();
        object.insert("type".into(), "object".into());
        return Some(object);
    };
    let mut object = schema.as_object()?.clone();
    match object.get("type") {
        None => {
            object.insert("type".into(), "object".into());
            Some(object)
        }
        Some(t) if t == "object" => Some(object),
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use skillgate::{FileKind, Language};

    fn skill(schema: Option<serde_json::Value>, manifest: &str) -> Skill {
        let mut b = Skill::builder("s", Language::Python, "print(1)")
            .description("does s")
            .file("SKILL.md", FileKind::Data, manifest.as_bytes().to_vec());
        if let Some(s) = schema {
            b = b.input_schema(s);
        }
        b.build()
    }

    #[test]
    fn a_tool_has_the_skills_name_description_schema_and_hints() {
        let schema = serde_json::json!({"type": "object", "required": ["q"],
            "properties": {"q": {"type": "string"}}});
        let s = skill(
            Some(schema.clone()),
            "---\nname: s\ndescription: d\nmetadata:\n  skillgate.read-only: \"true\"\n  skillgate.destructive: \"false\"\n---\n",
        );
        let tool = tool_of(&s).unwrap();
        let v = serde_json::to_value(&tool).unwrap();
        assert_eq!(v["name"], "s");
        assert_eq!(v["description"], "does s");
        assert_eq!(v["inputSchema"], schema);
        assert_eq!(v["annotations"]["readOnlyHint"], true);
        assert_eq!(v["annotations"]["destructiveHint"], false);
    }

    #[test]
    fn a_skill_without_hints_has_no_annotations_and_any_object_for_no_schema() {
        let s = skill(None, "---\nname: s\ndescription: d\n---\n");
        let v = serde_json::to_value(tool_of(&s).unwrap()).unwrap();
        assert!(v.get("annotations").is_none());
        assert_eq!(v["inputSchema"], serde_json::json!({"type": "object"}));
    }

    #[test]
    fn schemas_are_made_object_schemas_or_the_skill_is_no_tool() {
        let untyped = skill(Some(serde_json::json!({"required": ["a"]})), "");
        assert_eq!(
            serde_json::Value::Object(input_schema(&untyped).unwrap()),
            serde_json::json!({"type": "object", "required": ["a"]})
        );
        let array = skill(Some(serde_json::json!({"type": "array"})), "");
        assert!(tool_of(&array).is_none());
        let boolean = skill(Some(serde_json::json!(true)), "");
        assert!(tool_of(&boolean).is_none());
    }
}

//! How a tool takes its arguments: serde decides whether they fit, and a misfit is refused
//! `invalid_request` naming the argument at fault and what the tool's input schema says it
//! takes, in words a model acts on.

use rmcp::ErrorData;
use rmcp::handler::server::common::FromContextPart;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::JsonObject;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::schema;
use crate::error::{Error, ErrorCode, Result};

/// A tool's arguments: the front door's struct, or the refusal that says which argument is
/// wrong and what it takes. rmcp's own `Parameters` answers with serde's words ("failed to
/// deserialize parameters: missing field `operation`"); a model acts on a refusal it can read
/// like every other one. Named `Parameters` because rmcp's `#[tool]` macro finds a tool's
/// input schema by that name.
pub(super) struct Parameters<T>(pub(super) Result<T>);

impl<T: JsonSchema> JsonSchema for Parameters<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        T::schema_name()
    }

    /// The arguments' schema made portable (`schema::input`), whatever generator rmcp asks
    /// with: the one place every tool's input schema comes from.
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schema::input::<T>()
    }
}

impl<S, T> FromContextPart<ToolCallContext<'_, S>> for Parameters<T>
where
    T: DeserializeOwned + JsonSchema + 'static,
{
    fn from_context_part(
        context: &mut ToolCallContext<'_, S>,
    ) -> std::result::Result<Self, ErrorData> {
        let args = context.arguments.take().unwrap_or_default();
        Ok(Parameters(arguments(&context.name, args)))
    }
}

/// A tool call's arguments as `T`, or an `invalid_request` refusal naming the argument at
/// fault and what it takes. serde decides whether the arguments fit; the tool's input schema
/// (what the model was shown) only explains a misfit, so the two cannot disagree about what
/// is accepted.
pub(super) fn arguments<T: DeserializeOwned + JsonSchema + 'static>(
    tool: &str,
    args: JsonObject,
) -> Result<T> {
    let value = Value::Object(args);
    let err = match serde_path_to_error::deserialize::<_, T>(&value) {
        Ok(parsed) => return Ok(parsed),
        Err(err) => err,
    };
    let path: Vec<String> = err
        .path()
        .iter()
        .filter_map(|s| match s {
            serde_path_to_error::Segment::Map { key } => Some(key.clone()),
            serde_path_to_error::Segment::Seq { index } => Some(index.to_string()),
            _ => None,
        })
        .collect();
    let schema = schema::input::<T>().to_value();
    let message = explain(tool, &schema, &value, &path)
        .unwrap_or_else(|| format!("{tool} cannot take these arguments: {}", err.into_inner()));
    Err(Error::new(ErrorCode::InvalidRequest, message))
}

/// Says what is wrong at `path` (where serde stopped): an unknown or missing key of the object
/// there, else the value there, with what the schema says it takes.
fn explain(tool: &str, schema: &Value, args: &Value, path: &[String]) -> Option<String> {
    let mut here = (args, schema);
    for (depth, key) in path.iter().enumerate() {
        let value = match here.0 {
            Value::Object(o) => o.get(key)?,
            Value::Array(a) => a.get(key.parse::<usize>().ok()?)?,
            _ => return None,
        };
        let sub = match (here.0, properties(schema, here.1)) {
            (Value::Object(_), Some(props)) => match props.get(key) {
                Some(sub) => sub,
                // serde stops at the key it does not know.
                None => return Some(unknown(tool, &path[..=depth], props)),
            },
            _ => &Value::Bool(true),
        };
        here = (value, sub);
    }
    let (value, at) = here;
    if let (Value::Object(given), Some(props)) = (value, properties(schema, at)) {
        if let Some(key) = given.keys().find(|k| !props.contains_key(*k)) {
            let mut at_key = path.to_vec();
            at_key.push(key.clone());
            return Some(unknown(tool, &at_key, props));
        }
        let required = resolved(schema, at).get("required").and_then(Value::as_array);
        let missing = required
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|r| !given.contains_key(*r));
        if let Some(missing) = missing {
            let prefix: String = path.iter().map(|p| format!("{p}.")).collect();
            let takes = takes(schema, &props[missing]);
            return Some(format!("`{prefix}{missing}` is missing; {tool} needs it: {takes}"));
        }
    }
    if path.is_empty() {
        return None;
    }
    Some(format!("`{}` is {}; it takes {}", path.join("."), described(value), takes(schema, at)))
}

/// The refusal of an argument the tool does not take, listing those it does.
fn unknown(tool: &str, path: &[String], props: &serde_json::Map<String, Value>) -> String {
    let known: Vec<&str> = props.keys().map(String::as_str).collect();
    format!(
        "`{}` is not an argument {tool} takes; its arguments are {}",
        path.join("."),
        known.join(", ")
    )
}

/// A schema with its `$ref` followed (to the root's `$defs`).
fn resolved<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let target = schema.get("$ref").and_then(Value::as_str).and_then(|r| r.strip_prefix("#/"));
    match target {
        Some(pointer) => root.pointer(&format!("/{pointer}")).unwrap_or(schema),
        None => schema,
    }
}

/// The properties an object schema lists, through a `$ref` and an optional (`anyOf` with
/// `null`) wrapper.
fn properties<'a>(
    root: &'a Value,
    schema: &'a Value,
) -> Option<&'a serde_json::Map<String, Value>> {
    let schema = resolved(root, schema);
    if let Some(p) = schema.get("properties").and_then(Value::as_object) {
        return Some(p);
    }
    let branches = schema.get("anyOf").or_else(|| schema.get("oneOf"))?.as_array()?;
    branches.iter().find_map(|b| properties(root, b))
}

/// What a schema admits, in words: the names of a closed set, else the JSON types.
fn takes(root: &Value, schema: &Value) -> String {
    let schema = resolved(root, schema);
    if let Some(names) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<String> =
            names.iter().map(|n| n.as_str().map_or_else(|| n.to_string(), String::from)).collect();
        return format!("one of {}", names.join(", "));
    }
    if let Some(one) = schema.get("const") {
        return one.as_str().map_or_else(|| one.to_string(), String::from);
    }
    if let Some(branches) =
        schema.get("anyOf").or_else(|| schema.get("oneOf")).and_then(Value::as_array)
    {
        let kinds: Vec<String> = branches
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) != Some("null"))
            .map(|b| takes(root, b))
            .collect();
        return kinds.join(", or ");
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let words: Vec<String> = types
        .into_iter()
        .filter(|t| *t != "null")
        .map(|t| match t {
            "string" => "a string".to_string(),
            "integer" => "an integer".to_string(),
            "number" => "a number".to_string(),
            "boolean" => "true or false".to_string(),
            "array" => "a list".to_string(),
            "object" => match properties(root, schema) {
                Some(p) => format!(
                    "an object with {}",
                    p.keys().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                ),
                None => "an object".to_string(),
            },
            other => other.to_string(),
        })
        .collect();
    if words.is_empty() { "any JSON value".to_string() } else { words.join(" or ") }
}

/// A JSON value as a refusal names it.
fn described(value: &Value) -> String {
    const SHOWN_CHARS: usize = 40;
    match value {
        Value::Null => "null".to_string(),
        Value::Bool(b) => format!("the boolean {b}"),
        Value::Number(n) => format!("the number {n}"),
        Value::String(s) if s.chars().count() > SHOWN_CHARS => {
            format!("the string \"{}...\"", s.chars().take(SHOWN_CHARS).collect::<String>())
        }
        Value::String(s) => format!("the string \"{s}\""),
        Value::Array(_) => "a list".to_string(),
        Value::Object(_) => "an object".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service as tools;
    use serde_json::json;

    fn refused<T: DeserializeOwned + JsonSchema + 'static>(tool: &str, args: Value) -> String {
        let Value::Object(args) = args else { panic!("arguments are an object") };
        let err = arguments::<T>(tool, args).err().expect("the arguments were accepted");
        assert_eq!(err.code(), ErrorCode::InvalidRequest, "{}", err.message());
        err.message().to_string()
    }

    #[test]
    fn a_missing_argument_is_named_with_what_it_takes() {
        let m = refused::<tools::PatchArgs>("vault_patch", json!({"path": "a.md", "target": "A"}));
        assert_eq!(
            m,
            "`operation` is missing; vault_patch needs it: one of replace, prepend, append"
        );
        let m = refused::<tools::ReadArgs>("vault_read", json!({}));
        assert_eq!(m, "`path` is missing; vault_read needs it: a string");
        use super::super::budget::Paged;
        let m = refused::<Paged<tools::ReadArgs>>("vault_read", json!({"offset": 3}));
        assert_eq!(m, "`path` is missing; vault_read needs it: a string");
        let m = refused::<Paged<tools::ReadArgs>>("vault_read", json!({"path": ["Plan"]}));
        assert_eq!(m, "`path` is a list; it takes a string");
        let m = refused::<Paged<tools::ListArgs>>("vault_list", json!({"offset": -1}));
        assert!(m.starts_with("`offset` is the number -1; it takes an integer"), "{m}");
        let m = refused::<Paged<tools::ListArgs>>("vault_list", json!({"pathh": "A"}));
        assert!(m.starts_with("`pathh` is not an argument vault_list takes"), "{m}");
        assert!(m.ends_with("vault, path, offset"), "{m}");
    }

    #[test]
    fn a_wrong_value_is_named_with_what_was_sent_and_what_it_takes() {
        let m = refused::<tools::PatchArgs>(
            "vault_patch",
            json!({"path": "a.md", "target": "A", "operation": "insert"}),
        );
        assert_eq!(
            m,
            "`operation` is the string \"insert\"; it takes one of replace, prepend, append"
        );
        let m = refused::<tools::PatchArgs>(
            "vault_patch",
            json!({"path": "a.md", "target": "A", "operation": "append", "target_scope": 3}),
        );
        assert!(
            m.starts_with("`target_scope` is the number 3; it takes one of content, marker"),
            "{m}"
        );
        let m = refused::<tools::SearchArgs>("vault_search", json!({"query": "x", "k": "six"}));
        assert_eq!(m, "`k` is the string \"six\"; it takes an integer");
        let m = refused::<tools::WriteArgs>("vault_write", json!({"path": 7, "content": "x"}));
        assert_eq!(m, "`path` is the number 7; it takes a string");
        let m = refused::<tools::PatchArgs>(
            "vault_patch",
            json!({"path": "a.md", "target": "A", "operation": "replace",
                   "destination": {"parent": "B", "place": "middle"}}),
        );
        assert!(m.starts_with("`destination.place` is the string \"middle\"; it takes"), "{m}");
    }

    #[test]
    fn an_unknown_argument_is_named_with_the_arguments_the_tool_takes() {
        let m = refused::<tools::WriteArgs>(
            "vault_write",
            json!({"path": "a.md", "content": "x", "overwrit": true}),
        );
        assert!(
            m.starts_with("`overwrit` is not an argument vault_write takes; its arguments are "),
            "{m}"
        );
        assert!(m.contains("overwrite"), "{m}");
    }

    #[test]
    fn a_frontmatter_value_still_takes_numbers_booleans_lists_and_null() {
        for value in [json!(3), json!(true), json!(["a", 2]), json!("x"), Value::Null] {
            let Value::Object(args) = json!({"path": "a.md", "key": "k", "value": value.clone()})
            else {
                unreachable!()
            };
            let a: tools::SetFrontmatterArgs = arguments("vault_set_frontmatter", args).unwrap();
            assert_eq!(a.value, Some(value).filter(|v| !v.is_null()));
        }
    }

    #[test]
    fn arguments_that_fit_are_taken_as_serde_reads_them() {
        let Value::Object(args) = json!({"path": "a.md", "target": "A", "operation": "Append"})
        else {
            unreachable!()
        };
        let a: tools::PatchArgs = arguments("vault_patch", args).unwrap();
        assert_eq!(a.operation, crate::vault::edit::Operation::Append);
    }
}

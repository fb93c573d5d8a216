//! What a portable tool schema is, decided once for every tool's input and output schema.
//!
//! Clients that map tool schemas onto a single-`type` dialect (Gemini-style function
//! declarations, the MCP Inspector's `--strict` lint) reject or weaken a `type` array such as
//! `["string", "null"]` and a property that declares no type. schemars writes an `Option<T>`
//! field as exactly that union, so every input schema is generated here with [`portable`]
//! applied: an optional field is simply not required (absent means "not given", which is what
//! serde's `#[serde(default)]` reads), and subschemas are inlined (no `$ref` for a client to
//! resolve). serde still decides what is accepted: a `null` sent for an optional field reads as
//! absent, as before.

use schemars::generate::SchemaSettings;
use schemars::transform::transform_subschemas;
use schemars::{JsonSchema, Schema};
use serde_json::Value;

/// The input schema of a tool whose arguments are `T`: schemars' deserialize contract, made
/// portable by [`portable`], with every subschema inlined.
pub(crate) fn input<T: JsonSchema>() -> Schema {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    settings.with_transform(portable).into_generator().into_root_schema_for::<T>()
}

/// Rewrites a schema and its subschemas without nullable unions: `type: [T, "null"]` becomes
/// `type: T`, an `anyOf` of one schema and `{"type": "null"}` becomes that schema, and a
/// `default` of `null` goes (an absent optional field needs no default to say so).
pub(crate) fn portable(schema: &mut Schema) {
    transform_subschemas(&mut portable, schema);
    let Some(obj) = schema.as_object_mut() else { return };
    if let Some(Value::Array(types)) = obj.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            obj.insert("type".into(), only);
        }
    }
    let is_null = |b: &Value| b.get("type").and_then(Value::as_str) == Some("null");
    let lone = match obj.get("anyOf") {
        Some(Value::Array(branches)) if branches.iter().any(is_null) => {
            let rest: Vec<&Value> = branches.iter().filter(|b| !is_null(b)).collect();
            match rest.as_slice() {
                [Value::Object(only)] => Some(only.clone()),
                _ => None,
            }
        }
        _ => None,
    };
    if let Some(only) = lone {
        obj.remove("anyOf");
        for (k, v) in only {
            obj.entry(k).or_insert(v);
        }
    }
    if obj.get("default") == Some(&Value::Null) {
        obj.remove("default");
    }
}

/// What the MCP Inspector's `--strict` lint (`core/json/schemaLint.ts` of
/// `@modelcontextprotocol/inspector` 2.12.0) would report in `schema`, one line per finding:
/// a `type` array, a schema node with no validation keyword (it accepts anything), a bare
/// boolean schema where an object is expected, and a `$ref` outside the document.
#[cfg(test)]
pub(crate) fn findings(schema: &Value) -> Vec<String> {
    let mut out = Vec::new();
    lint(schema, "", None, &mut out);
    out
}

#[cfg(test)]
fn lint(node: &Value, at: &str, keyword: Option<&str>, out: &mut Vec<String>) {
    const BOOLEAN_VALUED: &[&str] =
        &["additionalProperties", "unevaluatedProperties", "additionalItems", "unevaluatedItems"];
    const CONSTRAINING: &[&str] = &[
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "format",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "items",
        "prefixItems",
        "contains",
        "additionalItems",
        "unevaluatedItems",
        "properties",
        "patternProperties",
        "additionalProperties",
        "unevaluatedProperties",
        "propertyNames",
        "dependentSchemas",
        "dependencies",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "if",
    ];
    let obj = match node {
        Value::Bool(_) if keyword.is_some_and(|k| BOOLEAN_VALUED.contains(&k)) => return,
        Value::Bool(b) => return out.push(format!("{at}: a bare `{b}` schema")),
        Value::Object(obj) => obj,
        _ => return,
    };
    if obj.get("type").is_some_and(Value::is_array) {
        out.push(format!("{at}: a type union {}", obj["type"]));
    }
    if obj.get("$ref").and_then(Value::as_str).is_some_and(|r| !r.is_empty() && !r.starts_with('#'))
    {
        out.push(format!("{at}: a remote $ref"));
    }
    // `if` constrains only with a `then` or an `else`.
    let constrains = obj.keys().any(|k| CONSTRAINING.contains(&k.as_str()) && k != "if")
        || (obj.contains_key("if") && (obj.contains_key("then") || obj.contains_key("else")));
    if !constrains && keyword != Some("not") {
        out.push(format!("{at}: no type or other validation keyword"));
    }
    for key in [
        "properties",
        "patternProperties",
        "dependentSchemas",
        "dependencies",
        "$defs",
        "definitions",
    ] {
        for (name, sub) in obj.get(key).and_then(Value::as_object).into_iter().flatten() {
            lint(sub, &format!("{at}.{key}.{name}"), Some(key), out);
        }
    }
    for key in ["allOf", "anyOf", "oneOf", "prefixItems"] {
        for (i, sub) in obj.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
            lint(sub, &format!("{at}.{key}[{i}]"), Some(key), out);
        }
    }
    for key in [
        "items",
        "contains",
        "not",
        "propertyNames",
        "if",
        "then",
        "else",
        "additionalProperties",
        "unevaluatedProperties",
        "additionalItems",
        "unevaluatedItems",
        "contentSchema",
    ] {
        match obj.get(key) {
            Some(Value::Array(subs)) if key == "items" => {
                for (i, sub) in subs.iter().enumerate() {
                    lint(sub, &format!("{at}.{key}[{i}]"), Some(key), out);
                }
            }
            Some(sub) => lint(sub, &format!("{at}.{key}"), Some(key), out),
            None => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_optional_field_is_not_required_and_has_one_type() {
        #[derive(JsonSchema, serde::Deserialize)]
        #[allow(dead_code)]
        struct Args {
            #[serde(default)]
            vault: Option<String>,
            path: String,
        }
        let schema = input::<Args>().to_value();
        assert_eq!(schema["properties"]["vault"], json!({"type": "string"}));
        assert_eq!(schema["required"], json!(["path"]));
        assert_eq!(findings(&schema), Vec::<String>::new());
    }

    #[test]
    fn the_lint_finds_what_the_inspector_reports() {
        let schema = json!({
            "type": "object",
            "properties": {
                "a": {"type": ["string", "null"]},
                "b": {"description": "anything"},
                "c": true,
                "d": {"anyOf": [{"type": "string"}, {"type": "number"}]},
            },
            "additionalProperties": false,
        });
        assert_eq!(
            findings(&schema),
            vec![
                ".properties.a: a type union [\"string\",\"null\"]",
                ".properties.b: no type or other validation keyword",
                ".properties.c: a bare `true` schema",
            ]
        );
    }
}

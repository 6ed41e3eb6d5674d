//! The XML-element call body ([`CallBody::XmlElements`], MiniMax M3) as IR, with slots for
//! its values:
//!
//! - the call — `GLUE<invoke name="NAME">`, one element per declared parameter (declared
//!   order; required ones always, optional ones may be left out), `GLUE</invoke>`;
//! - an element — `GLUE<KEY>VALUE GLUE</KEY>`, where VALUE is spelled by the schema at its
//!   JSON pointer: an object (of one `type` or none) that declares its properties and says
//!   nothing else but annotations (its keys closed) is its members as elements, an array of one item schema is `<item>` elements within
//!   `minItems`/`maxItems`, recursively; any other schema is a [`Slot::Value`] at that
//!   pointer, which a writer fills (raw text for a string, one of an enum's strings, a
//!   boolean, JSON for the rest) before the closing tag.
//!
//! Keys a schema does not name are never spelled: an element's closing tag repeats its
//! name, which a grammar cannot check for names it does not know. An object that names no
//! properties, or says more about its keys, is JSON text inside its element, which the
//! parser reads as JSON. This module must not spell a target or compile a value's schema
//! (the writers do); of a schema it reads the structure listed above.

use super::slots::{Slot, Union, property_pointer};
use crate::define::arguments::close_objects;
use crate::define::tool::ToolSet;
use crate::syntax::CallBody;
use serde_json::Value;
use toolgram_grammar::Expr;
use toolgram_grammar::schema::keywords::{self, Class};

/// The body of one call to tool `i`.
pub(crate) fn call(u: &mut Union, tools: &ToolSet, i: usize, body: CallBody) -> Expr {
    let CallBody::XmlElements {
        name_open,
        name_close,
        tag_end,
        call_end,
        glue,
    } = body
    else {
        return Expr::Seq(Vec::new());
    };
    let tool = &tools.tools()[i];
    let params = close_objects(&tool.parameters);
    let writer = Writer {
        tool: i,
        glue,
        params: &params,
    };
    Expr::seq(vec![
        Expr::lit(format!(
            "{glue}{name_open}{}{name_close}{tag_end}",
            tool.name
        )),
        writer.members(u, ""),
        Expr::lit(format!("{glue}{call_end}")),
    ])
}

/// The keywords an object's members as elements spell by themselves. A schema with any other
/// (bar annotations, per the keyword table) is JSON text, whose grammar enforces it.
const SPELLED_BY_MEMBERS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "$defs",
    "definitions",
];

/// The keywords `<item>` elements spell by themselves.
const SPELLED_BY_ITEMS: &[&str] = &[
    "type",
    "items",
    "minItems",
    "maxItems",
    "$defs",
    "definitions",
];

/// How the value at a pointer is spelled.
enum Shape {
    /// Its members as elements.
    Members,
    /// `<item>` elements of its `items` schema, between these counts.
    Items(u32, Option<u32>),
    /// A slot the writers fill.
    Leaf,
}

fn shape(schema: &Value) -> Shape {
    let Some(node) = schema.as_object() else {
        return Shape::Leaf;
    };
    let only = |spelled: &[&str]| {
        node.keys().all(|k| {
            spelled.contains(&k.as_str())
                || keywords::lookup(k).is_some_and(|kw| kw.ours == Class::Annotation)
        })
    };
    // One type or none: a type list (`["object", "null"]`) is JSON text.
    let is = |t: &str| node.get("type").is_none_or(|v| v == t);
    let count = |k: &str| {
        node.get(k)
            .and_then(Value::as_u64)
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
    };
    // Keys a schema does not name are never spelled, so an object open to others is text.
    let closed = node
        .get("additionalProperties")
        .is_none_or(|v| *v == Value::Bool(false));
    if is("object")
        && node.get("properties").is_some_and(Value::is_object)
        && closed
        && only(SPELLED_BY_MEMBERS)
    {
        Shape::Members
    } else if is("array")
        && node.get("items").is_some_and(Value::is_object)
        && only(SPELLED_BY_ITEMS)
    {
        Shape::Items(count("minItems").unwrap_or(0), count("maxItems"))
    } else {
        Shape::Leaf
    }
}

/// One tool's elements.
struct Writer<'a> {
    tool: usize,
    glue: &'static str,
    /// The tool's arguments schema, objects closed.
    params: &'a Value,
}

impl Writer<'_> {
    /// The members of the object schema at `at`: declared properties in order, required
    /// ones always.
    fn members(&self, u: &mut Union, at: &str) -> Expr {
        let Some(node) = self.params.pointer(at) else {
            return Expr::Seq(Vec::new());
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let names: Vec<String> = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        let items = names
            .iter()
            .map(|key| {
                let child = format!("{at}{}", property_pointer(key));
                let element = self.element(u, key, &child);
                if required.contains(&key.as_str()) {
                    element
                } else {
                    Expr::opt(element)
                }
            })
            .collect();
        Expr::seq(items)
    }

    /// `GLUE<key>VALUE GLUE</key>` for the schema at `at`.
    fn element(&self, u: &mut Union, key: &str, at: &str) -> Expr {
        let glue = self.glue;
        let open = Expr::lit(format!("{glue}<{key}>"));
        let close = format!("{glue}</{key}>");
        let schema = self.params.pointer(at).cloned().unwrap_or(Value::Null);
        let value = match shape(&schema) {
            Shape::Members => Expr::seq(vec![self.members(u, at), Expr::lit(close)]),
            Shape::Items(min, max) => {
                let item = self.element(u, "item", &format!("{at}/items"));
                Expr::seq(vec![Expr::repeat(item, min, max), Expr::lit(close)])
            }
            Shape::Leaf => {
                let name = format!("xml-{}-{}", self.tool, u.slots.len());
                // Nor the closing tag's start without its glue: a model that writes it is
                // closing the element, and must do so with the glue.
                let never = [glue, &format!("<{key}>"), &format!("</{key}")]
                    .into_iter()
                    .filter(|w| !w.is_empty())
                    .map(str::to_owned)
                    .collect();
                u.slot(
                    &name,
                    Slot::Value {
                        tool: self.tool,
                        at: Some(at.to_owned()),
                        close,
                        never,
                    },
                )
            }
        };
        Expr::seq(vec![open, value])
    }
}

#[cfg(test)]
mod tests {
    use crate::compile::{CompileOptions, compile, ir::compile_ir};
    use crate::define::tool::{ToolChoice, ToolSet};
    use crate::syntax::by_name;

    fn tools() -> ToolSet {
        ToolSet::from_json_str(
            r#"[{"type":"function","function":{"name":"search","parameters":{"type":"object","properties":{
                "query":{"type":"string","maxLength":50},
                "filters":{"type":"object","properties":{"lang":{"type":"string"},"year":{"type":"integer"}},"required":["lang"]},
                "sites":{"type":"array","items":{"type":"string"},"minItems":1,"maxItems":3},
                "any":{"type":"object"},
                "pick":{"anyOf":[{"type":"integer"},{"type":"object","properties":{"max":{"type":"integer"}}}]},
                "maybe":{"type":["object","null"],"properties":{"a":{"type":"string"}}},
                "open":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true},
                "noted":{"type":"object","title":"N","x-ui":1,"properties":{"b":{"type":"string"}}},
                "cond":{"type":"object","properties":{"c":{"type":"string"}},"if":{"required":["c"]},"then":{"required":["c"]}}},
                "required":["query"]}}}]"#,
        )
        .expect("valid tools")
    }

    /// Objects that declare their properties nest as elements and arrays as `<item>`s within
    /// their counts; an open object and a union are JSON text inside their element; strings
    /// are raw text that never holds the glue or its own tags.
    #[test]
    fn values_are_spelled_by_their_schema() {
        let m3 = by_name("minimax-m3").expect("registered");
        let opts = CompileOptions::default();
        let g = compile(&tools(), &ToolChoice::Required, false, m3, &opts).expect("compiles");
        let has = |line: &str| assert!(g.lark.contains(line), "{line}\n{}", g.lark);
        has(r#"calls: "<tool_call>" "\n"? call "\n"? "]<]minimax[>[</tool_call>""#);
        has(
            r#"call_0: "]<]minimax[>[<invoke name=\"search\">]<]minimax[>[<query>" xml_0_0 call_0_2? call_0_4? call_0_5? call_0_6? call_0_7? call_0_8? call_0_10? call_0_11? "]<]minimax[>[</invoke>""#,
        );
        has(
            r#"call_0_2: "]<]minimax[>[<filters>]<]minimax[>[<lang>" xml_0_1 call_0_1? "]<]minimax[>[</filters>""#,
        );
        has(r#"call_0_4: "]<]minimax[>[<sites>" call_0_3{1,3} "]<]minimax[>[</sites>""#);
        has(
            r#"xml_0_0[suffix="]<]minimax[>[</query>"]: /(?s:.*)/ & ~/(?s:.*)(\]<\]minimax\[>\[|<query>|<\/query)(?s:.*)/ & /(?s:.{0,50})/"#,
        );
        has(r#"xml_0_4_json: %json {"type":"object""#);
        has(r#"xml_0_5_json: %json {"anyOf":"#);
        // A type list, an object open to other keys, a conditional: JSON text; annotations
        // do not stop an object from being its members.
        has(r#"xml_0_6_json: %json {"type":["object","null"]"#);
        has(
            r#"xml_0_7_json: %json {"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true"#,
        );
        has(r#"call_0_10: "]<]minimax[>[<noted>" call_0_9? "]<]minimax[>[</noted>""#);
        has(r#"call_0_11: "]<]minimax[>[<cond>" xml_0_9"#);
        let deferred: Vec<(&str, &str)> = g
            .deferred
            .iter()
            .map(|d| (d.pointer.as_str(), d.keyword.as_str()))
            .collect();
        assert_eq!(
            deferred,
            [("/properties/cond", "if"), ("/properties/cond", "then")],
            "the conditional's keywords are left to the validator, named"
        );
        let ir = compile_ir(&tools(), &ToolChoice::Required, false, m3, &opts, false)
            .expect("compiles to IR");
        assert!(
            ir.grammar.undefined().is_empty(),
            "{:?}",
            ir.grammar.undefined()
        );
    }
}

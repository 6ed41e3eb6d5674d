//! Syntax derivation (`toolgram_core::template::derive`) on templates rendered by the
//! engine's chat template: calls written as JSON objects (with ids, named arguments, keyed
//! names), as the API gives them, with ids beside the name; what does not fit one shape the
//! same way in the one- and two-call renders is refused, and a derived syntax's grammar
//! accepts the template's own renders.

use toolgram_core::ToolChoice;
use toolgram_core::syntax::{CallBody, CallSyntax};
use toolgram_core::template::derive::{DeriveError, derive, regions};
use toolgram_core::template::probe::probe_tools;
use toolgram_engine::ByteChecker;
use toolgram_engine::template::ChatTemplate;

/// A closing tag that holds the tool's name puts the second call's name inside the
/// first call's tags: refused (or derived), never a panic.
#[test]
fn a_closing_tag_naming_the_tool_is_no_panic() {
    let source = "{%- for message in messages %}{{ message.role }}: {{ message.content or '' }}\
        {%- for call in message.tool_calls or [] %}\n<call {{ call.function.name }}>\n\
        {% for key, value in call.function.arguments | items %}<arg {{ key }}>{{ value }}\
        </arg of {{ call.function.name }}>\n{% endfor %}</call>{% endfor %}\n{% endfor %}\
        {%- if add_generation_prompt %}assistant: {% endif %}";
    let t = ChatTemplate::new(source, "<s>", "</s>").expect("compiles");
    let found = derive(&t);
    assert!(
        !matches!(found, Err(DeriveError::NoCalls)),
        "the template writes calls: {found:?}"
    );
}

/// A template writing each call as `<<call>>` + the JSON object `object` (a Jinja
/// expression over `call`) + `<</call>>`.
fn json_template(object: &str) -> String {
    format!(
        "{{%- for message in messages %}}{{{{ message.role }}}}: {{{{ message.content or '' }}}}\
         {{%- for call in message.tool_calls or [] %}}<<call>>{object}<</call>>{{% endfor %}}\n\
         {{% endfor %}}{{%- if add_generation_prompt %}}assistant: {{% endif %}}"
    )
}

/// The derived syntax for `object`, after its own check that it reads the template's
/// calls back; and the grammar compiled for it accepts the template's one-call render.
fn derived(object: &str) -> &'static CallSyntax {
    derived_from(&json_template(object))
}

/// The derived syntax for the template `source`, checked as [`derived`] says (the one-
/// and the two-call render).
fn derived_from(source: &str) -> &'static CallSyntax {
    let t = ChatTemplate::new(source, "<s>", "</s>").expect("compiles");
    let found = derive(&t).unwrap_or_else(|e| panic!("{source}: {e}"));
    let (one, two) = regions(&t).expect("calls");
    let tools = probe_tools().expect("probe tools");
    let opts = toolgram_core::compile::CompileOptions::default();
    let g =
        toolgram_core::compile::compile(&tools, &ToolChoice::Required, true, found.syntax, &opts)
            .expect("compiles");
    let checker = ByteChecker::new().expect("checker");
    let grammar = checker.compile(&g.lark).expect("llguidance");
    for calls in [&one, &two] {
        assert!(
            checker.accepts(&grammar, calls.trim()),
            "{source}: {calls:?} under {}",
            g.lark
        );
    }
    found.syntax
}

/// Whether `object` (a Jinja expression over `call`) is refused.
fn refused(object: &str) -> bool {
    let t = ChatTemplate::new(&json_template(object), "<s>", "</s>").expect("compiles");
    matches!(derive(&t), Err(DeriveError::Inconsistent { .. }))
}

/// JSON call objects with a call id (after the arguments, or first), or the arguments
/// under the tool's name, are derived with the id's key where the template writes it;
/// an id after the arguments under another name key is refused (the keyed body writes
/// its id first), as is Gemma's spelling with a plain quote for a marker (its strings
/// have no escapes).
#[test]
fn json_objects_with_ids_or_named_arguments_are_derived() {
    assert!(refused(
        r#"{"tool": "{{ call.function.name }}", "args": {{ call.function.arguments | tojson }}, "call_id": "{{ call.id }}"}"#
    ));
    assert!(refused(
        r#"{{ call.function.name }}{city:"{{ call.function.arguments.city }}",days:{{ call.function.arguments.days }}}"#
    ));
    assert!(!refused(
        r#"{{ call.function.name }}{city:<q>{{ call.function.arguments.city }}<q>,days:{{ call.function.arguments.days }}}"#
    ));
    let s = derived(
        r#"{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}, "call_id": "{{ call.id }}"}"#,
    );
    assert_eq!((s.body, s.id_key), (CallBody::Json, "call_id"));
    let s = derived(
        r#"{"id": "{{ call.id }}", "tool": "{{ call.function.name }}", "args": {{ call.function.arguments | tojson }}}"#,
    );
    assert_eq!(
        s.body,
        CallBody::JsonKeyed {
            name_key: "tool",
            id_key: "id"
        }
    );
    assert_eq!(s.args_key, "args");
    let s = derived(r#"{"{{ call.function.name }}": {{ call.function.arguments | tojson }}}"#);
    assert_eq!(s.body, CallBody::JsonNamedKey);
}

/// A template writing the calls as the API gives them (`tool_calls | tojson`) between
/// markers: OpenAI's call objects in a JSON list.
#[test]
fn calls_written_as_the_api_gives_them_are_derived() {
    let s = derived_from(
        "{%- for message in messages %}{{ message.role }}: {{ message.content or '' }}\
         {%- if message.tool_calls %}[TOOL_CALLS]{{ message.tool_calls | tojson }}[/TOOL_CALLS]\
         {%- endif %}\n{% endfor %}{%- if add_generation_prompt %}assistant: {% endif %}",
    );
    assert_eq!(s.body, CallBody::OpenAiJson);
    assert_eq!(s.opener(), "[TOOL_CALLS][");
}

/// A call id written between the name and the arguments, or right before the name, is
/// the body's id marker or id-first marker, not part of a marker.
#[test]
fn call_ids_beside_the_name_are_derived() {
    let per_call = |call: &str| {
        format!(
            "{{%- for message in messages %}}{{{{ message.role }}}}: {{{{ message.content or '' }}}}\
             {{%- for call in message.tool_calls or [] %}}{call}{{% endfor %}}\n\
             {{% endfor %}}{{%- if add_generation_prompt %}}assistant: {{% endif %}}"
        )
    };
    let s = derived_from(&per_call(
        "<<fn>>{{ call.function.name }}<<id>>{{ call.id }}<<args>>{{ call.function.arguments | tojson }}<</fn>>",
    ));
    assert!(
        matches!(
            s.body,
            CallBody::NameThenArgs {
                id_marker: "<<id>>",
                name_end: "<<args>>",
                id_first: "",
                ..
            }
        ),
        "{:?}",
        s.body
    );
    let s = derived_from(&per_call(
        "<<fn>>{{ call.id }}<<name>>{{ call.function.name }}\n{{ call.function.arguments | tojson }}<</fn>>",
    ));
    assert!(
        matches!(
            s.body,
            CallBody::NameThenArgs {
                id_first: "<<name>>",
                name_end: "\n",
                id_marker: "",
                ..
            }
        ),
        "{:?}",
        s.body
    );
}

//! Every scoring rule on hand-checked records (each verdict worked out by reading BFCL's
//! `ast_checker.py` by hand), the converters on BFCL's own examples, and the reader on the
//! shared data.

use super::checker::{Call, check};
use super::*;
use serde_json::{Value, json};

fn item(category: &str, functions: Value, answers: Value) -> Item {
    let language = Language::of(category);
    let functions: Vec<Value> = functions.as_array().cloned().unwrap_or_default();
    let answers: Vec<Map<String, Value>> = answers
        .as_array()
        .map(|a| a.iter().filter_map(|x| x.as_object().cloned()).collect())
        .unwrap_or_default();
    Item {
        id: format!("{category}_0"),
        category: category.to_owned(),
        language,
        scoring: Scoring::of(category, !answers.is_empty()),
        messages: vec![json!({"role": "user", "content": "q"})],
        tools: functions
            .iter()
            .map(|f| convert::openai_tool(f, language).unwrap_or_default())
            .collect(),
        tools_as_bfcl_sends: functions
            .iter()
            .map(|f| convert::openai_tool_as_bfcl_sends(f, language).unwrap_or_default())
            .collect(),
        functions,
        answers,
    }
}

fn call(name: &str, arguments: Value) -> Call {
    Call {
        name: name.to_owned(),
        arguments: arguments.as_object().cloned().unwrap_or_default(),
    }
}

/// `simple_python_0` as in the shared data.
fn triangle() -> Item {
    item(
        "simple_python",
        json!([{"name": "calculate_triangle_area", "description": "Area.", "parameters": {
            "type": "dict", "properties": {
                "base": {"type": "integer"}, "height": {"type": "integer"},
                "unit": {"type": "string"}},
            "required": ["base", "height"]}}]),
        json!([{"calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]}}]),
    )
}

fn kind(item: &Item, calls: &[Call]) -> String {
    check(item, calls)
        .err()
        .map(|m| m.kind)
        .unwrap_or_else(|| "ok".into())
}

#[test]
fn the_right_call_passes_and_an_optional_parameter_may_be_omitted() {
    let t = triangle();
    assert_eq!(
        kind(
            &t,
            &[call(
                "calculate_triangle_area",
                json!({"base": 10, "height": 5})
            )]
        ),
        "ok"
    );
    let with_unit = call(
        "calculate_triangle_area",
        json!({"base": 10, "height": 5, "unit": "Units"}),
    );
    assert_eq!(
        kind(&t, &[with_unit]),
        "ok",
        "strings compare case-insensitively"
    );
}

#[test]
fn the_function_name_must_be_exact() {
    let t = triangle();
    let c = call("calculate_triangle", json!({"base": 10, "height": 5}));
    assert_eq!(kind(&t, &[c]), "simple_function_checker:wrong_func_name");
}

#[test]
fn a_simple_item_takes_exactly_one_call() {
    let t = triangle();
    let c = call("calculate_triangle_area", json!({"base": 10, "height": 5}));
    assert_eq!(kind(&t, &[]), "simple_function_checker:wrong_count");
    assert_eq!(
        kind(&t, &[c.clone(), c]),
        "simple_function_checker:wrong_count"
    );
}

#[test]
fn required_parameters_must_be_present() {
    let c = call("calculate_triangle_area", json!({"base": 10}));
    assert_eq!(
        kind(&triangle(), &[c]),
        "simple_function_checker:missing_required"
    );
}

#[test]
fn no_parameter_outside_the_document_or_the_answer() {
    let c = call(
        "calculate_triangle_area",
        json!({"base": 10, "height": 5, "color": "red"}),
    );
    assert_eq!(
        kind(&triangle(), &[c]),
        "simple_function_checker:unexpected_param"
    );
}

#[test]
fn a_parameter_is_omitted_only_where_the_answer_allows_it() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["a"]}}]),
        json!([{"f": {"a": [1], "b": ["x"]}}]),
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"a": 1}))]),
        "simple_function_checker:missing_optional"
    );
}

#[test]
fn types_are_checked_and_an_int_is_accepted_for_a_float() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "x": {"type": "float"}, "n": {"type": "integer"}}, "required": ["x", "n"]}}]),
        json!([{"f": {"x": [2.0], "n": [3]}}]),
    );
    assert_eq!(kind(&i, &[call("f", json!({"x": 2, "n": 3}))]), "ok");
    assert_eq!(
        kind(&i, &[call("f", json!({"x": 2.0, "n": 3.0}))]),
        "type_error:simple"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"x": 2.5, "n": 3}))]),
        "value_error:others"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"x": "2", "n": 3}))]),
        "type_error:simple"
    );
}

#[test]
fn strings_are_normalised_as_bfcl_does() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "d": {"type": "string"}}, "required": ["d"]}}]),
        json!([{"f": {"d": ["April 1, 2024"]}}]),
    );
    for ok in [
        "april 1 2024",
        "April 1,2024",
        "April-1-2024",
        "APRIL_1_2024",
    ] {
        assert_eq!(kind(&i, &[call("f", json!({"d": ok}))]), "ok", "{ok}");
    }
    assert_eq!(
        kind(&i, &[call("f", json!({"d": "April 2, 2024"}))]),
        "value_error:string"
    );
}

#[test]
fn lists_match_element_by_element_in_order() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "xs": {"type": "array", "items": {"type": "string"}}}, "required": ["xs"]}}]),
        json!([{"f": {"xs": [["New York", "LA"], ["NYC", "LA"]]}}]),
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"xs": ["new york", "la"]}))]),
        "ok"
    );
    assert_eq!(kind(&i, &[call("f", json!({"xs": ["NYC", "LA"]}))]), "ok");
    assert_eq!(
        kind(&i, &[call("f", json!({"xs": ["LA", "NYC"]}))]),
        "value_error:list/tuple"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"xs": ["NYC"]}))]),
        "value_error:list/tuple"
    );
}

/// An array of floats, answered `[1.0, 3.0]`.
fn floats() -> Item {
    item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "xs": {"type": "array", "items": {"type": "float"}}}, "required": ["xs"]}}]),
        json!([{"f": {"xs": [[1.0, 3.0]]}}]),
    )
}

#[test]
fn nested_list_items_are_type_checked() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "xs": {"type": "array", "items": {"type": "integer"}}}, "required": ["xs"]}}]),
        json!([{"f": {"xs": [[1, 2]]}}]),
    );
    assert_eq!(kind(&i, &[call("f", json!({"xs": [1, 2]}))]), "ok");
    // A list of strings: the inner type check fails, and BFCL's `type_checker` (bfcl-eval
    // 2026.3.23) returns that failure from its "variable" path, still invalid.
    assert_eq!(
        kind(&i, &[call("f", json!({"xs": ["1", "2"]}))]),
        "type_error:nested"
    );
    // Integers for an array of floats: BFCL converts int to float only at the top level.
    let floats = floats();
    assert_eq!(
        kind(&floats, &[call("f", json!({"xs": [1, 3]}))]),
        "type_error:nested"
    );
    assert_eq!(kind(&floats, &[call("f", json!({"xs": [1.0, 3.0]}))]), "ok");
}

/// Records made by an older checker or rule: scored again from their stored calls.
#[test]
fn rescoring_applies_this_checker_and_bfcls_irrelevance_rule_to_stored_calls() {
    let floats = floats();
    let mut old = crate::bfcl::scored(&floats, "grammar", &[call("f", json!({"xs": [1.0, 3.0]}))]);
    old.calls = vec![json!({"name": "f", "arguments": {"xs": [1, 3]}})];
    let again = rescored(&floats, &old);
    assert!(!again.correct);
    assert!(
        again
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("type_error:nested"))
    );

    let irrelevance = item(
        "irrelevance",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {}}}]),
        json!([]),
    );
    let mut cut = crate::bfcl::scored(&irrelevance, "grammar", &[]);
    cut.correct = false;
    cut.reason = Some("truncated: generation stopped after 512 tokens inside a tool call".into());
    let again = rescored(&irrelevance, &cut);
    assert!(again.correct, "no call decoded: BFCL's correct refusal");
    assert_eq!(
        again.reason, cut.reason,
        "the error stays for the strict column"
    );

    let mut peer = cut.clone();
    peer.reason = Some("peer error: connection refused".into());
    assert!(!rescored(&irrelevance, &peer).correct);
    assert_eq!(
        rescored(&irrelevance, &again),
        again,
        "scoring again changes nothing"
    );
}

#[test]
fn dictionaries_match_key_by_key_with_optional_keys() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "p": {"type": "dict", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}},
            "required": ["p"]}}]),
        json!([{"f": {"p": [{"a": ["Rome"], "b": [2, ""]}]}}]),
    );
    assert_eq!(kind(&i, &[call("f", json!({"p": {"a": "rome"}}))]), "ok");
    assert_eq!(
        kind(&i, &[call("f", json!({"p": {"a": "Rome", "b": 2}}))]),
        "ok"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"p": {"a": "Rome", "c": 1}}))]),
        "value_error:dict_key"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"p": {"b": 2}}))]),
        "value_error:dict_key"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"p": {"a": "Paris"}}))]),
        "value_error:dict_value"
    );
}

#[test]
fn lists_of_dictionaries_match_in_order_and_count() {
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "ps": {"type": "array", "items": {"type": "dict"}}}, "required": ["ps"]}}]),
        json!([{"f": {"ps": [[{"a": [1]}, {"a": [2]}]]}}]),
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"ps": [{"a": 1}, {"a": 2}]}))]),
        "ok"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"ps": [{"a": 2}, {"a": 1}]}))]),
        "value_error:dict_value"
    );
    assert_eq!(
        kind(&i, &[call("f", json!({"ps": [{"a": 1}]}))]),
        "value_error:list_dict_count"
    );
}

#[test]
fn a_value_of_the_answers_type_is_a_variable_compared_as_is() {
    // Documented as integer, answered as a string: the model may pass the variable's name.
    let i = item(
        "simple_python",
        json!([{"name": "f", "parameters": {"type": "dict", "properties": {
            "n": {"type": "integer"}}, "required": ["n"]}}]),
        json!([{"f": {"n": ["count"]}}]),
    );
    assert_eq!(kind(&i, &[call("f", json!({"n": "count"}))]), "ok");
    assert_eq!(
        kind(&i, &[call("f", json!({"n": "Count"}))]),
        "value_error:others",
        "no normalisation"
    );
}

#[test]
fn multiple_expects_exactly_one_call_of_the_right_function() {
    let fs = json!([
        {"name": "a.b", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}},
        {"name": "c", "parameters": {"type": "dict", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}]);
    let i = item("multiple", fs, json!([{"a.b": {"x": [1]}}]));
    assert_eq!(
        kind(&i, &[call("a_b", json!({"x": 1}))]),
        "ok",
        "`.` is `_` in the tool name"
    );
    assert_eq!(
        kind(&i, &[call("c", json!({"x": 1}))]),
        "simple_function_checker:wrong_func_name"
    );
    let two = [call("a_b", json!({"x": 1})), call("a_b", json!({"x": 1}))];
    assert_eq!(kind(&i, &two), "multiple_function_checker:wrong_count");
}

#[test]
fn parallel_calls_match_in_any_order_with_the_right_count() {
    let fs = json!([{"name": "spotify.play", "parameters": {"type": "dict", "properties": {
        "artist": {"type": "string"}, "duration": {"type": "integer"}}, "required": ["artist", "duration"]}}]);
    let i = item(
        "parallel",
        fs,
        json!([{"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}},
               {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}}]),
    );
    let ts = call(
        "spotify_play",
        json!({"artist": "Taylor Swift", "duration": 20}),
    );
    let m5 = call(
        "spotify_play",
        json!({"artist": "Maroon 5", "duration": 15}),
    );
    assert_eq!(kind(&i, &[m5.clone(), ts.clone()]), "ok");
    assert_eq!(
        kind(&i, std::slice::from_ref(&ts)),
        "parallel_function_checker_no_order:wrong_count"
    );
    assert_eq!(
        kind(&i, &[ts.clone(), ts]),
        "parallel_function_checker_no_order:cannot_find_match"
    );
}

#[test]
fn irrelevance_passes_only_without_a_call() {
    let fs = json!([{"name": "f", "parameters": {"type": "dict", "properties": {}}}]);
    let i = item("irrelevance", fs, json!([]));
    assert_eq!(kind(&i, &[]), "ok");
    assert_eq!(
        kind(&i, &[call("f", json!({}))]),
        "irrelevance_checker:call_made"
    );
    let fs = json!([{"name": "f", "parameters": {"type": "dict", "properties": {}}}]);
    let r = item("live_relevance", fs, json!([]));
    assert_eq!(kind(&r, &[]), "relevance_checker:no_call");
    assert_eq!(kind(&r, &[call("f", json!({}))]), "ok");
}

#[test]
fn java_arguments_are_expressions_in_strings() {
    let fs = json!([{"name": "SQLCompletionAnalyzer.makeProposalsFromObject", "parameters": {
        "type": "dict", "properties": {
            "object": {"type": "any"}, "useShortName": {"type": "boolean"},
            "params": {"type": "HashMap"}, "limit": {"type": "long"},
            "ids": {"type": "ArrayList", "items": {"type": "integer"}}},
        "required": ["object", "useShortName", "params"]}}]);
    let i = item(
        "simple_java",
        fs,
        json!([{"SQLCompletionAnalyzer.makeProposalsFromObject": {"object": ["Customers"],
            "useShortName": [true], "params": [{"limit": [50], "schemaFilter": ["public"]}],
            "limit": [5, ""], "ids": [[1, 2], ""]}}]),
    );
    let name = "SQLCompletionAnalyzer_makeProposalsFromObject";
    let good = call(
        name,
        json!({"object": "Customers", "useShortName": "true",
        "params": "new HashMap<String, Object>() {{ put(\"limit\", 50); put(\"schemaFilter\", \"public\"); }}",
        "limit": "5L", "ids": "new ArrayList<>(Arrays.asList(1, 2))"}),
    );
    assert_eq!(kind(&i, &[good]), "ok");
    let not_string = call(
        name,
        json!({"object": "Customers", "useShortName": true, "params": "new HashMap<>()"}),
    );
    assert_eq!(kind(&i, &[not_string]), "type_error:java");
    let no_l = call(
        name,
        json!({"object": "Customers", "useShortName": "true",
        "params": "new HashMap<String, Object>() {{ put(\"limit\", 50); put(\"schemaFilter\", \"public\"); }}",
        "limit": "5"}),
    );
    assert_eq!(
        kind(&i, &[no_l]),
        "type_error:simple",
        "a long needs its L; \"5\" stays a string"
    );
}

#[test]
fn javascript_arguments_are_expressions_in_strings() {
    let fs = json!([{"name": "validateUserInput", "parameters": {"type": "dict", "properties": {
        "inputField": {"type": "String"}, "isComplete": {"type": "Boolean"},
        "xs": {"type": "array", "items": {"type": "float"}}, "o": {"type": "dict"}},
        "required": ["inputField", "isComplete"]}}]);
    let i = item(
        "simple_javascript",
        fs,
        json!([{"validateUserInput": {"inputField": ["userInputField"], "isComplete": [true],
            "xs": [[1.5, 2.0], ""], "o": [{"k": ["v"]}, ""]}}]),
    );
    let good = call(
        "validateUserInput",
        json!({"inputField": "'userInputField'", "isComplete": "true",
        "xs": "[1.5, 2.0]", "o": "{'k': 'v'}"}),
    );
    assert_eq!(kind(&i, &[good]), "ok");
    let wrong = call(
        "validateUserInput",
        json!({"inputField": "userInputField", "isComplete": "yes"}),
    );
    assert_eq!(
        kind(&i, &[wrong]),
        "type_error:simple",
        "\"yes\" stays a string, not true"
    );
}

#[test]
fn java_converter_matches_bfcls_examples() {
    use super::java::convert;
    assert_eq!(convert("123", "integer", None), json!(123));
    assert_eq!(convert("2.5f", "float", None), json!(2.5));
    assert_eq!(convert("2.5", "float", None), json!("2.5"));
    assert_eq!(convert("-2.5", "double", None), json!(-2.5));
    assert_eq!(convert("123L", "long", None), json!(123));
    assert_eq!(
        convert("new int[]{1, 2, 3}", "Array", None),
        json!([1, 2, 3])
    );
    assert_eq!(convert("new int[] { }", "Array", None), json!([]));
    assert_eq!(
        convert(
            "new ArrayList<>(Arrays.asList(\"a\", \"b\"))",
            "ArrayList",
            None
        ),
        json!(["a", "b"])
    );
    assert_eq!(
        convert(
            "new ArrayList<Double>() {{ add(1.0); add(2.0); }}",
            "ArrayList",
            Some("double")
        ),
        json!([1.0, 2.0])
    );
    assert_eq!(convert("new HashMap<>() {{ }}", "HashMap", None), json!({}));
    assert_eq!(
        convert(
            "new HashMap<String, Object>() {{ put(\"key1\", 123); put(\"key2\", true); }}",
            "HashMap",
            None
        ),
        json!({"key1": 123, "key2": true})
    );
    assert_eq!(
        convert("new long[]{1L, 2, 3L}", "Array", Some("long")),
        json!([1, "2", 3])
    );
}

#[test]
fn javascript_converter_matches_bfcls_examples() {
    use super::js::convert;
    assert_eq!(convert("123n", "Bigint", None), json!(123));
    assert_eq!(convert("abc", "String", None), json!("abc"));
    assert_eq!(
        convert("new Array(1, 2, 3)", "array", None),
        json!([1, 2, 3])
    );
    assert_eq!(
        convert("[1, 'two', true]", "array", None),
        json!([1, "two", true])
    );
    assert_eq!(
        convert(" [ [ 1, 2 ], [ 3,   4], [5, 6]]", "array", Some("array")),
        json!([[1, 2], [3, 4], [5, 6]])
    );
    assert_eq!(
        convert(
            "{'key1': 123, 'key2': 'value', 'key3': false}",
            "dict",
            None
        ),
        json!({"key1": 123, "key2": "value", "key3": false})
    );
    assert_eq!(
        convert(
            "{\"initialState\": initialStateObject, \"middlewares\": [\"loggerMiddleware\"], \"enhancers\": [\"a\", \"b\"]}",
            "dict",
            None
        ),
        json!({"initialState": "initialStateObject", "middlewares": ["loggerMiddleware"], "enhancers": ["a", "b"]})
    );
}

#[test]
fn tools_are_prepared_as_bfcl_prepares_them() {
    let f = json!({"name": "a.b", "description": "D.", "parameters": {"type": "dict", "optional": ["t"], "properties": {
        "x": {"type": "float", "description": "X."}, "t": {"type": "tuple", "items": {"type": "float"}},
        "o": {"type": "dict", "properties": {"k": {"type": "any"}}}}}});
    let t = convert::openai_tool(&f, Language::Python).unwrap_or_default();
    assert_eq!(t["function"]["name"], "a_b");
    assert_eq!(
        t["function"]["description"],
        "D. Note that the provided function is in Python 3 syntax."
    );
    let p = &t["function"]["parameters"];
    assert_eq!(p["type"], "object");
    assert!(
        p.get("optional").is_none(),
        "BFCL's `optional` is not JSON Schema"
    );
    assert_eq!(
        p["properties"]["x"],
        json!({"type": "number", "description": "X. This is a float type value."})
    );
    assert_eq!(p["properties"]["t"]["items"]["type"], "number");
    assert_eq!(p["properties"]["o"]["properties"]["k"]["type"], "string");
    let j = json!({"name": "C.m", "description": "D.", "parameters": {"type": "dict", "properties": {
        "xs": {"type": "ArrayList", "description": "Xs.", "items": {"type": "String"}}}}});
    let t = convert::openai_tool(&j, Language::Java).unwrap_or_default();
    assert_eq!(
        t["function"]["parameters"]["properties"]["xs"],
        json!({"type": "string", "description":
        "Xs. This is Java ArrayList type parameter in string representation. The list elements are of type String; they are not in string representation."})
    );
    // A JavaScript dict's entries are written into its description as Python's json.dumps
    // writes them (`", "` and `": "`, keys in their order).
    let j = json!({"name": "f", "description": "D.", "parameters": {"type": "dict", "properties": {
        "o": {"type": "dict", "description": "O.", "properties": {
            "b": {"type": "integer"}, "a": {"type": "array", "items": {"type": "string"}}}}}}});
    let t = convert::openai_tool(&j, Language::JavaScript).unwrap_or_default();
    assert_eq!(
        t["function"]["parameters"]["properties"]["o"]["description"],
        "O. This is JavaScript dict type parameter in string representation. The dictionary \
         entries have the following schema; they are not in string representation. \
         {\"b\": {\"type\": \"integer\"}, \"a\": {\"type\": \"array\", \"items\": {\"type\": \"string\"}}}"
    );
}

fn shared_bfcl() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/bfcl")
}

/// An accepted value as a model would write it: a dictionary answer holds lists of accepted
/// values per key; take the first of each.
fn realize(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter_map(|(k, x)| {
                    let first = x.as_array()?.first()?;
                    (first != "").then(|| (k.clone(), realize(first)))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(realize).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_shared_category_reads_and_its_ground_truth_scores_itself() {
    // Each item's first accepted value per parameter, as a call, must pass its own checker
    // (Python categories: Java/JS answers are converted values, not expressions).
    for c in DEFAULT_CATEGORIES {
        let items = read_category(&shared_bfcl(), c).unwrap_or_else(|e| panic!("{c}: {e}"));
        assert!(!items.is_empty(), "{c}");
        if Language::of(c) != Language::Python || items[0].scoring == Scoring::NoCall {
            continue;
        }
        let mut failures = Vec::new();
        for it in &items {
            let calls: Vec<Call> = it
                .answers
                .iter()
                .filter_map(|a| {
                    let (name, params) = a.iter().next()?;
                    let arguments = params
                        .as_object()?
                        .iter()
                        .filter_map(|(k, v)| {
                            let first = realize(v.as_array()?.first()?);
                            (first != "").then(|| (k.clone(), first))
                        })
                        .collect();
                    Some(Call {
                        name: convert::tool_name(name),
                        arguments,
                    })
                })
                .collect();
            if let Err(m) = check(it, &calls) {
                failures.push(format!("{}: {} {}", it.id, m.kind, m.message));
            }
        }
        assert!(
            failures.len() * 50 <= items.len(),
            "{c}: {} of {} fail: {:?}",
            failures.len(),
            items.len(),
            &failures[..failures.len().min(5)]
        );
    }
}

#[test]
fn a_category_this_repository_has_never_seen_is_read_by_its_file_name() {
    let dir = std::env::temp_dir().join(format!("toolgram-bfcl-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("possible_answer")).unwrap_or_default();
    let q = r#"{"id": "live_simple_0", "question": [[{"role": "user", "content": "hi"}]], "function": [{"name": "f", "parameters": {"type": "dict", "properties": {"a": {"type": "string"}}, "required": ["a"]}}]}"#;
    let a = r#"{"id": "live_simple_0", "ground_truth": [{"f": {"a": ["x"]}}]}"#;
    std::fs::write(dir.join("BFCL_v4_live_simple.json"), q).unwrap_or_default();
    std::fs::write(
        dir.join("BFCL_v4_simple.json"),
        q.replace("live_simple", "simple"),
    )
    .unwrap_or_default();
    std::fs::write(dir.join("possible_answer/BFCL_v4_live_simple.json"), a).unwrap_or_default();
    let items = read_category(&dir, "live_simple").unwrap_or_default();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].scoring, Scoring::Simple);
    assert_eq!(kind(&items[0], &[call("f", json!({"a": "x"}))]), "ok");
    // `simple` has no answer file: scored as "no call", never mixed up with `live_simple`.
    let simple = read_category(&dir, "simple").unwrap_or_default();
    assert_eq!(simple[0].scoring, Scoring::NoCall);
    assert!(matches!(
        read_category(&dir, "nope"),
        Err(crate::EvalError::NoCategory { .. })
    ));
    let _ = std::fs::remove_dir_all(&dir);
}

proptest::proptest! {
    /// The converters read what a model wrote: any text, any type, no panic; the checker
    /// gives a verdict for any arguments.
    #[test]
    fn converters_and_checker_take_any_text(text in "\\PC{0,40}", pick in 0usize..14) {
        const JAVA: [&str; 14] = ["byte", "short", "integer", "float", "double", "long", "boolean",
            "char", "Array", "ArrayList", "HashMap", "String", "any", "Set"];
        const JS: [&str; 8] = ["String", "integer", "float", "Bigint", "Boolean", "dict", "array", "any"];
        let _ = super::java::convert(&text, JAVA[pick], Some(JAVA[(pick + 3) % 14]));
        let _ = super::js::convert(&text, JS[pick % 8], Some(JS[(pick + 1) % 8]));
        let _ = super::java::value(&text);
        let _ = super::js::value(&text);
        let i = triangle();
        let _ = check(&i, &[call("calculate_triangle_area", json!({"base": text.clone(), "unit": text}))]);
    }
}

/// BFCL's FC reading: `tool_calls` decoded with `json.loads`; a reply without them (text) does
/// not decode — a miss where a call was due, a correct refusal on irrelevance; arguments that
/// are not JSON fail the decode, JSON that is not an object the format check; an empty
/// `tool_calls` list decodes to no call.
#[test]
fn bfcl_fc_replies_are_read_as_bfcl_reads_them() {
    let tri = triangle();
    let no_call = item("irrelevance", json!([]), json!([]));
    let call = |args: &str| {
        json!({"tool_calls": [{"type": "function", "function": {
            "name": "calculate_triangle_area", "arguments": args}}]})
    };
    let good = call(r#"{"base": 10, "height": 5}"#);
    assert!(fc::verdict(&tri, &good).0.is_ok());
    let text = json!({"content": "The area is 25."});
    let kind = |r: Result<(), checker::Miss>| r.err().map(|m| m.kind);
    assert_eq!(
        kind(fc::verdict(&tri, &text).0).as_deref(),
        Some("ast_decoder:decoder_failed")
    );
    assert!(fc::verdict(&no_call, &text).0.is_ok());
    assert_eq!(
        kind(fc::verdict(&tri, &call("{base: 10}")).0).as_deref(),
        Some("ast_decoder:decoder_failed")
    );
    assert_eq!(
        kind(fc::verdict(&tri, &call("[10, 5]")).0).as_deref(),
        Some("ast_decoder:decoder_wrong_output_format")
    );
    let empty = json!({"content": null, "tool_calls": []});
    assert_eq!(
        kind(fc::verdict(&tri, &empty).0).as_deref(),
        Some("simple_function_checker:wrong_count")
    );
    assert!(fc::verdict(&no_call, &empty).0.is_ok());
    assert!(fc::verdict(&no_call, &good).0.is_err());
    // BFCL's result file: the decoded list, or the text.
    let result = json!([{"calculate_triangle_area": r#"{"base": 10, "height": 5}"#}]);
    assert!(fc::verdict(&tri, &fc::message_of_result(&result)).0.is_ok());
    let prose = fc::message_of_result(&json!("no"));
    assert!(fc::decode(&prose).is_err());
}

/// The request BFCL's handler sends: the item's messages as they are, BFCL's tools, its
/// temperature, `store: false`, and nothing toolgram would add.
#[test]
fn bfcl_fc_request_is_bfcls() {
    let tri = triangle();
    let body = fc::request_body(&tri, "m");
    assert_eq!(body["messages"], json!(tri.messages));
    assert_eq!(body["tools"], json!(tri.tools_as_bfcl_sends));
    assert_eq!(body["store"], json!(false));
    assert_eq!(body["model"], json!("m"));
    assert!((body["temperature"].as_f64().unwrap_or_default() - 0.001).abs() < 1e-9);
    for absent in ["max_tokens", "tool_choice", "parallel_tool_calls"] {
        assert!(body.get(absent).is_none(), "{absent}");
    }
}

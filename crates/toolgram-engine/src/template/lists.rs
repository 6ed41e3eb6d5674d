//! Lists a chat template can append to: `namespace(ids=[])` holds its lists as
//! [`MutableList`]s, so `ns.ids.append(x)` and `ns.ids.pop(0)` work as in Python's Jinja
//! (Kimi K2 queues its call ids this way). minijinja's own values are immutable, and only
//! lists given to `namespace(…)` become mutable: a list from `{% set l = [] %}` or a later
//! `{% set ns.l = [] %}` still refuses `append`, and `ns.l + [x]` reads the live list, not a
//! copy. Every other list method is pycompat's. This module must not render.

use minijinja::value::{Enumerator, Object, ObjectRepr, Value};
use minijinja::{Error, ErrorKind, State};
use std::sync::{Arc, Mutex};

/// minijinja's `namespace()`, with each list among its defaults made a [`MutableList`].
pub(crate) fn namespace(defaults: Option<Value>) -> Result<Value, Error> {
    let defaults = defaults.map(|d| {
        let pairs = d
            .as_object()
            .filter(|o| o.repr() == ObjectRepr::Map)
            .and_then(|o| o.try_iter_pairs());
        match pairs {
            Some(pairs) => Value::from_iter(pairs.map(|(k, v)| (k, mutable(v)))),
            None => d,
        }
    });
    minijinja::functions::namespace(defaults)
}

/// `v` as a [`MutableList`] if it is a list, else unchanged.
fn mutable(v: Value) -> Value {
    let is_list = v.as_object().is_some_and(|o| o.repr() == ObjectRepr::Seq);
    match v.try_iter() {
        Ok(items) if is_list => Value::from_object(MutableList(Mutex::new(items.collect()))),
        _ => v,
    }
}

/// A list whose `append`, `extend` and `pop` change it in place.
#[derive(Debug)]
pub(crate) struct MutableList(Mutex<Vec<Value>>);

impl MutableList {
    fn items(&self) -> Result<std::sync::MutexGuard<'_, Vec<Value>>, Error> {
        self.0
            .lock()
            .map_err(|_| Error::new(ErrorKind::InvalidOperation, "list poisoned"))
    }
}

impl Object for MutableList {
    fn repr(self: &Arc<Self>) -> ObjectRepr {
        ObjectRepr::Seq
    }

    fn get_value(self: &Arc<Self>, key: &Value) -> Option<Value> {
        let items = self.items().ok()?;
        let i = i64::try_from(key.clone()).ok()?;
        let i = if i < 0 { items.len() as i64 + i } else { i };
        items.get(usize::try_from(i).ok()?).cloned()
    }

    fn enumerator_len(self: &Arc<Self>) -> Option<usize> {
        self.items().ok().map(|items| items.len())
    }

    fn is_true(self: &Arc<Self>) -> bool {
        self.items().is_ok_and(|items| !items.is_empty())
    }

    fn enumerate(self: &Arc<Self>) -> Enumerator {
        match self.items() {
            Ok(items) => Enumerator::Values(items.clone()),
            Err(_) => Enumerator::Empty,
        }
    }

    fn call_method(
        self: &Arc<Self>,
        _state: &State<'_, '_>,
        method: &str,
        args: &[Value],
    ) -> Result<Value, Error> {
        // Read an argument list before locking: it may be this list (`l.extend(l)`).
        let more: Option<Vec<Value>> = match (method, args) {
            ("extend", [xs]) => Some(xs.try_iter()?.collect()),
            _ => None,
        };
        let mut items = self.items()?;
        match (method, args) {
            ("append", [x]) => items.push(x.clone()),
            ("extend", [_]) => items.extend(more.unwrap_or_default()),
            ("pop", [] | [_]) => {
                let len = items.len() as i64;
                let i = match args.first() {
                    Some(i) => i64::try_from(i.clone())?,
                    None => -1,
                };
                let i = if i < 0 { len + i } else { i };
                return match usize::try_from(i).ok().filter(|&i| i < items.len()) {
                    Some(i) => Ok(items.remove(i)),
                    None => Err(Error::new(
                        ErrorKind::InvalidOperation,
                        "pop index out of range",
                    )),
                };
            }
            _ => return Err(Error::from(ErrorKind::UnknownMethod)),
        }
        Ok(Value::from(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use minijinja::Environment;

    fn render(source: &str) -> Result<String, Error> {
        let mut env = Environment::new();
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("namespace", namespace);
        env.render_str(source, ())
    }

    #[test]
    fn a_namespace_list_is_appended_to_and_popped_in_place() {
        let out = render(
            "{% set ns = namespace(ids=[], n=1) %}{% set _ = ns.ids.append('a') %}\
             {% set _ = ns.ids.append('b') %}{% set _ = ns.ids.extend(['c']) %}\
             {{ ns.ids | length }} {{ ns.ids[-1] }} {{ ns.ids.pop(0) }} {{ ns.ids | join(',') }} \
             {{ ns.ids.pop() }} {% if ns.ids %}left{% endif %} {{ ns.ids.count('b') }} {{ ns.n }}",
        )
        .expect("renders");
        assert_eq!(out, "3 c a b,c c left 1 1");
    }

    #[test]
    fn a_list_extended_with_itself_doubles() {
        let out = render(
            "{% set ns = namespace(l=[1, 2]) %}{% set _ = ns.l.extend(ns.l) %}{{ ns.l | join(',') }}",
        )
        .expect("renders");
        assert_eq!(out, "1,2,1,2");
    }

    #[test]
    fn popping_an_empty_list_is_an_error_not_a_panic() {
        let err = render("{% set ns = namespace(ids=[]) %}{{ ns.ids.pop(0) }}");
        assert!(err.is_err());
    }
}

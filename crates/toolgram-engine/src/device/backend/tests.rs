use super::*;

#[test]
fn the_backend_is_freed_with_the_last_engine_after_its_contexts_and_model() {
    let (one, engine) = crate::test_engine("test");
    let batch = engine.batch(2).expect("a context");
    let mut session = batch.session().expect("a lane");
    session.clear_cache();
    let model = std::sync::Arc::downgrade(&engine.model);
    assert!(alive());
    drop(session);
    drop(batch);
    assert!(alive(), "the engine still holds it");
    drop(engine);
    assert!(
        model.upgrade().is_none(),
        "the model is freed with the engine"
    );
    assert!(
        !alive(),
        "nothing of llama.cpp is left for the process's exit"
    );
    // A later engine gets a backend again.
    drop(one);
    let (_again, engine) = crate::test_engine("test");
    assert!(alive());
    drop(engine);
}

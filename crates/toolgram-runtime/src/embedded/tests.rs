use super::*;
use std::sync::Mutex;
use std::sync::atomic::AtomicBool;
use std::time::Duration;
use toolgram_core::{ChatMessage, ToolSet};

/// Set by a test: the next request's lane panics (there is no input that makes one panic).
static PANIC_NEXT: AtomicBool = AtomicBool::new(false);

/// The test-only hook in [`Worker::handle`].
pub(super) fn panic_if_asked() {
    if PANIC_NEXT.swap(false, Ordering::SeqCst) {
        panic!("a lane panic injected by a test");
    }
}

/// One lane, one slot: a request after a failed one runs only if that slot was released.
fn start() -> (std::sync::MutexGuard<'static, ()>, Embedded) {
    static ONE: Mutex<()> = Mutex::new(());
    let lock = ONE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let path = toolgram_engine::models::find("test")
        .and_then(|m| m.fetch())
        .expect("model fetch");
    let opts = EngineOptions {
        n_ctx: Some(1024),
        ..EngineOptions::default()
    };
    let limits = WorkerLimits {
        max_sessions: 1,
        parallel: 1,
        max_queue: 1,
        measure_speed: false,
    };
    let e = Embedded::start(&path, opts, limits, None).expect("the test model loads");
    (lock, e)
}

fn ask(e: &Embedded) -> Result<Response, RunError> {
    let tools = ToolSet::new(Vec::new()).expect("an empty pool");
    let mut req = Request::new(vec![ChatMessage::text("user", "Hi")], tools);
    req.sampling.max_tokens = 4;
    let ready = crate::check::ready(&e.grammars, req)?;
    e.ask(ready, Instant::now(), None)
}

#[test]
fn a_lane_that_panics_answers_lane_failed_releases_its_slot_and_serves_the_next() {
    let (_one, e) = start();
    PANIC_NEXT.store(true, Ordering::SeqCst);
    let err = ask(&e).expect_err("the lane failed");
    assert_eq!(err.kind(), "lane_failed", "{err}");
    assert_eq!(err.status(), crate::Status::Server);
    assert_eq!(e.lanes_failed.load(Ordering::Relaxed), 1);
    let e = Arc::new(e);
    let (tx, rx) = mpsc::channel();
    let asker = Arc::clone(&e);
    std::thread::spawn(move || {
        let _ = tx.send(ask(&asker).map(|r| r.finish_reason));
    });
    let next = rx
        .recv_timeout(Duration::from_secs(120))
        .expect("the next request is served, not left waiting for the failed lane");
    assert!(next.is_ok(), "{next:?}");
}

#[test]
fn dropping_the_handle_frees_the_engine_before_it_returns() {
    let (_one, e) = start();
    ask(&e).expect("served");
    // The engine thread holds this until its engine (model, contexts, backend) is freed.
    let held = Arc::clone(&e.lanes_failed);
    drop(e);
    assert_eq!(
        Arc::strong_count(&held),
        1,
        "the drop returned before the engine thread ended"
    );
}

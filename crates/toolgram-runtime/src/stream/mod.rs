//! Streaming: [`Event`]s as the reply is decoded — reasoning and content deltas, each call's
//! start (id, name) once its name is complete, its argument deltas, its end — then the final
//! [`Response`]. Where the grammar makes the reply final, the embedded engine's bytes are read
//! as they come ([`scanner`]) — and so is a provider's text on the grammar path as it
//! arrives ([`LiveState`]) —, a call's events sent once the call is complete (so a call that
//! the token limit cuts is never presented as one); what is not streamed live (a reply that
//! may still fail validation or change, a custom tool's input) is sent when the run ends, so
//! the deltas always add up to the final reply. This module must not validate or retry: it
//! reports what the run stage does.

mod canonical;
mod scanner;

use crate::error::RunError;
use crate::response::{Response, ToolStep};
pub(crate) use scanner::ScanOptions;
use scanner::{Delta, Scanner};
use std::cell::RefCell;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex};
use toolgram_providers::LiveReply;

/// One step of a streamed run.
#[derive(Debug)]
pub enum Event {
    /// More of the reasoning block.
    ReasoningDelta(String),
    /// More of the text.
    ContentDelta(String),
    /// A call begins: its id and (complete) name.
    ToolCallStart {
        /// Position of the call in the reply.
        index: usize,
        /// Its id, the same as in the final [`Response`].
        id: String,
        /// The tool.
        name: String,
        /// A grammar (custom) tool: the deltas are its input text, not JSON arguments.
        custom: bool,
    },
    /// More of a call's arguments (a function's compact JSON, or a custom tool's input).
    ToolCallDelta {
        /// Position of the call.
        index: usize,
        /// The text to append.
        arguments: String,
        /// A grammar (custom) tool's input, as in its `ToolCallStart`.
        custom: bool,
    },
    /// A call's arguments are complete.
    ToolCallEnd {
        /// Position of the call.
        index: usize,
    },
    /// The attempt whose deltas came so far failed validation and is retried with the
    /// errors: forget them; the final [`Response`] lists the failed attempts.
    Retry {
        /// The attempt that starts now (2, 3, …).
        attempt: usize,
    },
    /// A tool loop ran a call on an MCP server ([`crate::Runtime::stream_tool_loop`]); the
    /// reply's own events follow the loop's last step.
    ToolStep(Box<ToolStep>),
    /// The run ended with this reply; the deltas since the last `Retry` add up to it.
    Done(Box<Response>),
    /// The run failed.
    Failed(RunError),
}

/// Where a streamed run's events go, in order, the last [`Event::Done`] or [`Event::Failed`]:
/// called on the thread that runs the request (a lane, a provider's or the ballots' thread),
/// so it must hand each event on and return, never wait for a reader. The one channel from
/// a run to its consumer: [`crate::Runtime::stream`] puts a `std` channel behind it, the
/// server its client's response body.
#[derive(Clone)]
pub struct Sink(Arc<Mutex<dyn FnMut(Event) + Send>>);

impl Sink {
    /// A sink calling `f` with each event.
    pub fn new(f: impl FnMut(Event) + Send + 'static) -> Self {
        Self(Arc::new(Mutex::new(f)))
    }

    /// Hand `e` on.
    pub fn send(&self, e: Event) {
        if let Ok(mut f) = self.0.lock() {
            f(e);
        }
    }
}

impl std::fmt::Debug for Sink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sink")
    }
}

/// The events of one run, in order; the last is [`Event::Done`] or [`Event::Failed`].
pub struct EventStream {
    pub(crate) rx: Receiver<Event>,
}

impl Iterator for EventStream {
    type Item = Event;

    fn next(&mut self) -> Option<Event> {
        self.rx.recv().ok()
    }
}

impl EventStream {
    /// Skip to the end: the final reply or error.
    pub fn finish(self) -> Result<Response, RunError> {
        for event in self {
            match event {
                Event::Done(r) => return Ok(*r),
                Event::Failed(e) => return Err(e),
                _ => {}
            }
        }
        Err(RunError::Stopped("the run ended without a reply".into()))
    }
}

#[derive(Debug)]
struct SentCall {
    id: String,
    name: String,
    arguments: String,
    ended: bool,
}

/// A provider's reply text handed to a run's [`StreamState`] as it arrives
/// ([`toolgram_providers::LiveReply`]).
pub(crate) struct LiveState<'s>(&'s RefCell<StreamState>);

impl<'s> LiveState<'s> {
    /// `state` as the live reader a provider model takes.
    pub(crate) fn boxed(state: &'s RefCell<StreamState>) -> Box<dyn LiveReply + 's> {
        Box::new(Self(state))
    }
}

impl LiveReply for LiveState<'_> {
    fn started(&mut self) {
        self.0.borrow_mut().started();
    }

    fn text(&mut self, delta: &str) {
        self.0.borrow_mut().piece(delta.as_bytes());
    }
}

/// What one run has streamed so far, and the channel it streams to.
pub(crate) struct StreamState {
    sink: Sink,
    scan: Option<ScanOptions>,
    scanner: Option<Scanner>,
    custom: Vec<String>,
    attempt: usize,
    content: String,
    reasoning: String,
    calls: Vec<SentCall>,
    deltas: Vec<Delta>,
    /// Hold each call's events, after the first, until the next call starts or the run ends:
    /// the loop guard may still cut it.
    hold: bool,
    /// The events of the last call begun and not yet sent: every call waits for its end (a
    /// call the token limit cuts never reaches a client as a call), and under `hold` for the
    /// next call or the run's end.
    held: Vec<Event>,
}

impl StreamState {
    /// `scan`: read the bytes live with these options (`None`: send at the end only);
    /// `custom`: names of grammar tools, whose input is sent whole; `hold`: a call's events
    /// wait until the next call starts or the run ends (the loop guard may cut the last
    /// call of a reply that holds several).
    pub(crate) fn new(
        sink: Sink,
        scan: Option<ScanOptions>,
        custom: Vec<String>,
        hold: bool,
    ) -> Self {
        Self {
            sink,
            scan,
            scanner: None,
            custom,
            attempt: 0,
            content: String::new(),
            reasoning: String::new(),
            calls: Vec::new(),
            deltas: Vec::new(),
            hold,
            held: Vec::new(),
        }
    }

    fn send(&self, e: Event) {
        self.sink.send(e);
    }

    /// Hold an event of call `index`, the last begun; at its end send what was held, unless
    /// `hold` keeps it for the next call or the run's end (the first call of a reply cannot
    /// run away from an earlier one).
    fn send_call(&mut self, index: usize, e: Event) {
        let ended = matches!(e, Event::ToolCallEnd { .. });
        self.held.push(e);
        if ended && !(self.hold && index > 0) {
            self.release();
        }
    }

    /// Send the held events: their call stays in the reply.
    fn release(&mut self) {
        for e in std::mem::take(&mut self.held) {
            self.send(e);
        }
    }

    /// An attempt starts decoding.
    pub(crate) fn started(&mut self) {
        self.attempt += 1;
        let streamed =
            !self.content.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty();
        if self.attempt > 1 && streamed {
            self.send(Event::Retry {
                attempt: self.attempt,
            });
        }
        self.content.clear();
        self.reasoning.clear();
        self.calls.clear();
        self.held.clear();
        self.scanner = self.scan.clone().map(Scanner::new);
    }

    /// The bytes of one decode step.
    pub(crate) fn piece(&mut self, bytes: &[u8]) {
        let Some(scanner) = self.scanner.as_mut() else {
            return;
        };
        let mut deltas = std::mem::take(&mut self.deltas);
        scanner.push(bytes, &mut deltas);
        for d in deltas.drain(..) {
            self.apply(d);
        }
        self.deltas = deltas;
    }

    fn apply(&mut self, d: Delta) {
        match d {
            Delta::Reasoning(t) => {
                self.reasoning.push_str(&t);
                self.send(Event::ReasoningDelta(t));
            }
            Delta::Content(t) => {
                self.content.push_str(&t);
                self.send(Event::ContentDelta(t));
            }
            Delta::CallName { index, name } if index == self.calls.len() => {
                self.release();
                let id = toolgram_engine::call_id();
                let custom = self.custom.contains(&name);
                self.send_call(
                    index,
                    Event::ToolCallStart {
                        index,
                        id: id.clone(),
                        name: name.clone(),
                        custom,
                    },
                );
                self.calls.push(SentCall {
                    id,
                    name,
                    arguments: String::new(),
                    ended: false,
                });
            }
            Delta::Arguments { index, text } => {
                if let Some(c) = self.calls.get_mut(index)
                    && !self.custom.contains(&c.name)
                {
                    c.arguments.push_str(&text);
                    self.send_call(
                        index,
                        Event::ToolCallDelta {
                            index,
                            arguments: text,
                            custom: false,
                        },
                    );
                }
            }
            Delta::CallEnd { index } => {
                if let Some(c) = self.calls.get_mut(index)
                    && !self.custom.contains(&c.name)
                {
                    c.ended = true;
                    self.send_call(index, Event::ToolCallEnd { index });
                }
            }
            Delta::CallName { .. } => {}
        }
    }

    /// The run ended: send what the final reply has beyond what was streamed, give its calls
    /// the ids already sent, and send it (or the error).
    pub(crate) fn finish(mut self, result: Result<Response, RunError>) {
        let mut response = match result {
            Ok(r) => r,
            Err(e) => return self.send(Event::Failed(e)),
        };
        if let Some(held) = self.calls.len().checked_sub(1)
            && !self.held.is_empty()
        {
            let kept = response
                .tool_calls
                .get(held)
                .is_some_and(|c| c.name == self.calls[held].name);
            if kept {
                self.release();
            } else {
                self.held.clear();
                self.calls.truncate(held);
            }
        }
        let reasoning = response.reasoning.clone().unwrap_or_default();
        if let Some(rest) = self.rest_of(&reasoning, &self.reasoning) {
            self.send(Event::ReasoningDelta(rest));
        }
        let content = response.content.clone().unwrap_or_default();
        if let Some(rest) = self.rest_of(&content, &self.content) {
            self.send(Event::ContentDelta(rest));
        }
        for (index, call) in response.tool_calls.iter_mut().enumerate() {
            let text = call.arguments_text();
            let custom = matches!(call.kind, crate::response::CallKind::Custom { .. });
            match self.calls.get_mut(index).filter(|s| s.name == call.name) {
                Some(sent) => call.id = sent.id.clone(),
                None => {
                    self.calls.truncate(index);
                    self.calls.push(SentCall {
                        id: call.id.clone(),
                        name: call.name.clone(),
                        arguments: String::new(),
                        ended: false,
                    });
                    self.send(Event::ToolCallStart {
                        index,
                        id: call.id.clone(),
                        name: call.name.clone(),
                        custom,
                    });
                }
            }
            let sent = &self.calls[index];
            if let Some(rest) = self.rest_of(&text, &sent.arguments) {
                self.send(Event::ToolCallDelta {
                    index,
                    arguments: rest,
                    custom,
                });
            }
            if !sent.ended {
                self.send(Event::ToolCallEnd { index });
            }
        }
        self.send(Event::Done(Box::new(response)));
    }

    /// What `full` adds to what was `sent`; a stream that went astray is logged.
    fn rest_of(&self, full: &str, sent: &str) -> Option<String> {
        match full.strip_prefix(sent) {
            Some(rest) if !rest.is_empty() => Some(rest.to_owned()),
            Some(_) => None,
            None => {
                tracing::warn!(sent, full, "streamed deltas differ from the final reply");
                None
            }
        }
    }
}

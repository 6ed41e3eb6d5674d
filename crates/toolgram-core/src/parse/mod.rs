//! Model output → typed tool calls: [`strict`] reads what a compiled grammar produced
//! (exactly its syntax); [`lenient`] reads free, unconstrained output of any family and
//! repairs what it can.
//!
//! This module must not compile grammars or validate arguments against their schemas (the
//! validate stage does).

pub mod lenient;
pub mod strict;

pub use strict::{ParsedOutput, parse_output, split_plan, split_reasoning};

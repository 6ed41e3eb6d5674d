//! The validate-and-retry loop (`toolgram-retry`) as both paths run it: the request's pool,
//! choice, conversation and policy, and the loop's failure as a [`RunError`]. This module must
//! not build replies.

use crate::error::RunError;
use crate::request::Request;
use toolgram_retry::{CallModel, Outcome};

/// Ask `model` until its reply passes validation, within `req.retry`.
pub(crate) fn run<M: CallModel>(model: &mut M, req: &Request) -> Result<Outcome, RunError>
where
    M::Error: std::fmt::Display + Into<RunError>,
{
    Ok(toolgram_retry::run(
        model,
        &req.tools,
        &req.tool_choice,
        &req.messages,
        req.retry,
    )?)
}

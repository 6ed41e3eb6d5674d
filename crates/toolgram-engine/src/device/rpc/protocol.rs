//! ggml's RPC wire format, as much of it as the relay needs: a request is `cmd: u8`,
//! `size: u64` (little-endian) and `size` bytes; a reply, for the commands that have one, is
//! `size: u64` and that many bytes (`ggml-rpc.cpp`, `send_rpc_cmd`). Which commands reply, and
//! how long the reply is, is fixed by the client; this table mirrors it for protocol 7.
//! It also holds the stand-in replies the relay gives once its worker is lost, and the HELLO
//! exchange a probe makes. This module must not open a connection of its own.

/// `RPC_PROTO_MAJOR_VERSION` of the ggml this crate links (`ggml-rpc.h`).
pub(super) const PROTO_MAJOR: u8 = 7;

/// `RPC_PROTO_MINOR_VERSION`: llama.cpp's client aborts on a worker whose minor is newer.
pub(super) const PROTO_MINOR: u8 = 0;

/// `RPC_CMD_HELLO`: always 14, in every protocol version.
pub(super) const HELLO: u8 = 14;

/// `RPC_CONN_CAPS_SIZE`: the transport capabilities a HELLO carries both ways.
pub(super) const CONN_CAPS: usize = 24;

/// A HELLO reply: major, minor, patch, padding, then the capabilities.
pub(super) const HELLO_REPLY: usize = 4 + CONN_CAPS;

/// What a command's reply is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Reply {
    /// No reply (the client does not wait).
    None,
    /// A reply of this many bytes.
    Fixed(usize),
    /// `GET_TENSOR`: as many bytes as the request's last field (`size: u64`) asks.
    Asked,
}

/// The reply `cmd` gets; `None` for a command this protocol version does not have.
pub(super) fn reply(cmd: u8) -> Option<Reply> {
    Some(match cmd {
        // ALLOC_BUFFER (remote_ptr, remote_size), GET_DEVICE_MEMORY (free, total)
        0 | 11 => Reply::Fixed(16),
        // GET_ALIGNMENT, GET_MAX_SIZE, BUFFER_GET_BASE, GET_ALLOC_SIZE
        1 | 2 | 3 | 13 => Reply::Fixed(8),
        // FREE_BUFFER, BUFFER_CLEAR, SET_TENSOR, GRAPH_COMPUTE, INIT_TENSOR, GRAPH_RECOMPUTE,
        // MEMSET_TENSOR
        4 | 5 | 6 | 10 | 12 | 16 | 17 => Reply::None,
        // SET_TENSOR_HASH, COPY_TENSOR (result: u8)
        7 | 9 => Reply::Fixed(1),
        8 => Reply::Asked,
        HELLO => Reply::Fixed(HELLO_REPLY),
        // DEVICE_COUNT
        15 => Reply::Fixed(4),
        _ => return None,
    })
}

/// The stand-in reply to `cmd` once the worker is lost, written into `out` (already zeroed,
/// of the reply's length): the values that keep llama.cpp's client from failing an assertion
/// (a protocol version it speaks, a non-zero alignment and base address) while the engine
/// stops the request that is running. Zeros elsewhere: no device, no buffer, no hash hit,
/// empty tensors.
pub(super) fn stand_in(cmd: u8, out: &mut [u8]) {
    match cmd {
        HELLO => out[0] = PROTO_MAJOR,
        // GET_ALIGNMENT
        1 => out.copy_from_slice(&64u64.to_le_bytes()),
        // GET_MAX_SIZE
        2 => out.copy_from_slice(&u64::MAX.to_le_bytes()),
        // BUFFER_GET_BASE
        3 => out.copy_from_slice(&4096u64.to_le_bytes()),
        _ => {}
    }
}

/// The HELLO request a probe sends: the command, its size and no capabilities.
pub(super) fn hello_request() -> [u8; 9 + CONN_CAPS] {
    let mut req = [0u8; 9 + CONN_CAPS];
    req[0] = HELLO;
    req[1..9].copy_from_slice(&(CONN_CAPS as u64).to_le_bytes());
    req
}

/// Read a HELLO reply (its size field, then the reply): the worker's version, or why it is
/// not one this build can use.
pub(super) fn read_hello(size: [u8; 8], reply: &[u8; HELLO_REPLY]) -> Result<String, String> {
    if u64::from_le_bytes(size) != HELLO_REPLY as u64 {
        return Err(
            "it does not speak ggml's RPC protocol (its HELLO reply has the wrong size)".into(),
        );
    }
    let version = format!("{}.{}.{}", reply[0], reply[1], reply[2]);
    if reply[0] != PROTO_MAJOR || reply[1] > PROTO_MINOR {
        return Err(format!(
            "it speaks ggml RPC protocol {version}; this toolgram speaks \
             {PROTO_MAJOR}.{PROTO_MINOR} (run `toolgram worker` from the same build on every host)"
        ));
    }
    Ok(version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_of_the_protocol_has_a_reply_rule() {
        for cmd in 0..=17u8 {
            assert!(reply(cmd).is_some(), "command {cmd}");
        }
        // RPC_CMD_NONE (18) and RPC_CMD_COUNT are never sent.
        assert_eq!(reply(18), None);
        assert_eq!(reply(8), Some(Reply::Asked));
        assert_eq!(reply(10), Some(Reply::None));
    }

    #[test]
    fn a_hello_reply_is_read_for_its_version() {
        let mut reply = [0u8; HELLO_REPLY];
        reply[0] = PROTO_MAJOR;
        let size = (HELLO_REPLY as u64).to_le_bytes();
        assert_eq!(read_hello(size, &reply), Ok(format!("{PROTO_MAJOR}.0.0")));
        reply[0] = PROTO_MAJOR + 1;
        assert!(read_hello(size, &reply).unwrap_err().contains("same build"));
        reply[0] = PROTO_MAJOR;
        reply[1] = PROTO_MINOR + 1;
        assert!(
            read_hello(size, &reply).is_err(),
            "a newer minor aborts llama.cpp's client"
        );
        assert!(read_hello(3u64.to_le_bytes(), &reply).is_err());
        let mut stand_in_hello = [0u8; HELLO_REPLY];
        stand_in(HELLO, &mut stand_in_hello);
        assert!(read_hello(size, &stand_in_hello).is_ok());
    }
}

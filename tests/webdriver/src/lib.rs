//! A WebDriver client for the browser tests: the calls of fantoccini's API they make (a session
//! with capabilities, `goto`, `find` by CSS, an element's text, click, clear and keys, a script,
//! the page source, a refresh, a screenshot, an alert's text, closing the session), each one
//! HTTP request to chromedriver on loopback (W3C WebDriver: JSON in, `{"value": ...}` out).
//! The tests name it `fantoccini` (Cargo.toml), so they read as they did with fantoccini.

use std::fmt;

use base64::Engine as _;
use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// W3C's key of an element reference in a response.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

/// How an element is looked up: by CSS selector, as the tests do.
#[derive(Clone, Copy, Debug)]
pub enum Locator<'a> {
    Css(&'a str),
}

/// A failed command: the WebDriver error (`no such element`, `no such alert`, ...) and its
/// message, or a transport failure.
#[derive(Debug, Clone)]
pub struct CmdError {
    pub error: String,
    pub message: String,
}

impl fmt::Display for CmdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.error, self.message)
    }
}

impl std::error::Error for CmdError {}

/// A failed session start.
pub type NewSessionError = CmdError;

fn transport(e: impl fmt::Display) -> CmdError {
    CmdError {
        error: "transport".into(),
        message: e.to_string(),
    }
}

/// Starts a session: `ClientBuilder::new(connector).capabilities(caps).connect(url)`. The
/// connector is accepted for fantoccini's signature and not used: the driver is on loopback.
pub struct ClientBuilder {
    caps: Map<String, Value>,
}

impl ClientBuilder {
    pub fn new<C>(_connector: C) -> ClientBuilder {
        ClientBuilder { caps: Map::new() }
    }

    pub fn capabilities(&mut self, caps: Map<String, Value>) -> &mut ClientBuilder {
        self.caps = caps;
        self
    }

    pub async fn connect(&mut self, url: &str) -> Result<Client, NewSessionError> {
        let host = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        let body = json!({ "capabilities": { "alwaysMatch": Value::Object(self.caps.clone()) } });
        let value = request(&host, "POST", "/session", Some(&body)).await?;
        let session = value
            .get("sessionId")
            .and_then(Value::as_str)
            .ok_or_else(|| transport(format!("no sessionId in {value}")))?
            .to_string();
        Ok(Client { host, session })
    }
}

/// One WebDriver session.
#[derive(Clone, Debug)]
pub struct Client {
    host: String,
    session: String,
}

impl Client {
    async fn cmd(&self, method: &str, path: &str, body: Option<&Value>) -> Result<Value, CmdError> {
        let path = format!("/session/{}{path}", self.session);
        request(&self.host, method, &path, body).await
    }

    pub async fn goto(&self, url: &str) -> Result<(), CmdError> {
        self.cmd("POST", "/url", Some(&json!({ "url": url })))
            .await
            .map(drop)
    }

    pub async fn refresh(&self) -> Result<(), CmdError> {
        self.cmd("POST", "/refresh", Some(&json!({})))
            .await
            .map(drop)
    }

    pub async fn source(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "/source", None).await?)
    }

    pub async fn find(&self, locator: Locator<'_>) -> Result<Element, CmdError> {
        let Locator::Css(css) = locator;
        let body = json!({ "using": "css selector", "value": css });
        let value = self.cmd("POST", "/element", Some(&body)).await?;
        let id = value
            .get(ELEMENT)
            .and_then(Value::as_str)
            .ok_or_else(|| transport(format!("no element reference in {value}")))?;
        Ok(Element {
            client: self.clone(),
            id: id.to_string(),
        })
    }

    pub async fn execute(&self, script: &str, args: Vec<Value>) -> Result<Value, CmdError> {
        let body = json!({ "script": script, "args": args });
        self.cmd("POST", "/execute/sync", Some(&body)).await
    }

    /// The page as PNG bytes.
    pub async fn screenshot(&self) -> Result<Vec<u8>, CmdError> {
        let b64 = string(self.cmd("GET", "/screenshot", None).await?)?;
        base64::engine::general_purpose::STANDARD
            .decode(b64.as_bytes())
            .map_err(transport)
    }

    /// The open alert's text; `no such alert` when none is open.
    pub async fn get_alert_text(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "/alert/text", None).await?)
    }

    /// Ends the session (the browser closes; the driver stays).
    pub async fn close(self) -> Result<(), CmdError> {
        self.cmd("DELETE", "", None).await.map(drop)
    }
}

/// An element of the current page.
#[derive(Clone, Debug)]
pub struct Element {
    client: Client,
    id: String,
}

impl Element {
    async fn cmd(&self, method: &str, what: &str, body: Option<&Value>) -> Result<Value, CmdError> {
        let path = format!("/element/{}{what}", self.id);
        self.client.cmd(method, &path, body).await
    }

    pub async fn text(&self) -> Result<String, CmdError> {
        string(self.cmd("GET", "/text", None).await?)
    }

    pub async fn click(&self) -> Result<(), CmdError> {
        self.cmd("POST", "/click", Some(&json!({}))).await.map(drop)
    }

    pub async fn clear(&self) -> Result<(), CmdError> {
        self.cmd("POST", "/clear", Some(&json!({}))).await.map(drop)
    }

    pub async fn send_keys(&self, text: &str) -> Result<(), CmdError> {
        self.cmd("POST", "/value", Some(&json!({ "text": text })))
            .await
            .map(drop)
    }
}

fn string(value: Value) -> Result<String, CmdError> {
    match value {
        Value::String(s) => Ok(s),
        other => Err(transport(format!("not a string: {other}"))),
    }
}

/// One request to the driver: the response's `value`, or its WebDriver error. chromedriver
/// answers `Connection: close` but keeps the socket open, so the body is read by its
/// `Content-Length` (or its chunks), never to the stream's end.
async fn request(
    host: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> Result<Value, CmdError> {
    let body = body.map(Value::to_string).unwrap_or_default();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n");
    if method != "GET" {
        head.push_str(&format!(
            "Content-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    head.push_str("\r\n");
    let mut stream = TcpStream::connect(host).await.map_err(transport)?;
    stream.write_all(head.as_bytes()).await.map_err(transport)?;
    stream.write_all(body.as_bytes()).await.map_err(transport)?;
    let mut raw = Vec::new();
    let mut buf = [0u8; 16384];
    let split = loop {
        if let Some(at) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf).await.map_err(transport)?;
        if n == 0 {
            return Err(transport("the driver closed before a whole header"));
        }
        raw.extend_from_slice(&buf[..n]);
    };
    let header = String::from_utf8_lossy(&raw[..split]).to_ascii_lowercase();
    let length = header.lines().find_map(|l| {
        l.strip_prefix("content-length:")
            .and_then(|v| v.trim().parse::<usize>().ok())
    });
    let chunked = header.contains("transfer-encoding: chunked");
    let mut payload = raw.split_off(split + 4);
    loop {
        let done = match length {
            Some(n) => payload.len() >= n,
            None if chunked => payload.ends_with(b"0\r\n\r\n"),
            None => false,
        };
        if done {
            break;
        }
        let n = stream.read(&mut buf).await.map_err(transport)?;
        if n == 0 {
            break;
        }
        payload.extend_from_slice(&buf[..n]);
    }
    if let Some(n) = length {
        payload.truncate(n);
    } else if chunked {
        payload = dechunk(&payload)?;
    }
    let status: u16 = header
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| transport("a response without a status"))?;
    let json: Value = serde_json::from_slice(&payload).map_err(transport)?;
    let value = json.get("value").cloned().unwrap_or(Value::Null);
    if (200..300).contains(&status) {
        return Ok(value);
    }
    let field = |k: &str| {
        value
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    Err(CmdError {
        error: field("error"),
        message: format!("HTTP {status}: {}", field("message")),
    })
}

/// A chunked body's bytes.
fn dechunk(mut data: &[u8]) -> Result<Vec<u8>, CmdError> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or_else(|| transport("a cut chunk"))?;
        let size_text = String::from_utf8_lossy(&data[..line_end]);
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("").trim(), 16)
            .map_err(transport)?;
        data = &data[line_end + 2..];
        if size == 0 {
            return Ok(out);
        }
        if data.len() < size {
            return Err(transport("a cut chunk"));
        }
        out.extend_from_slice(&data[..size]);
        data = data.get(size + 2..).unwrap_or(&[]);
    }
}

//! A reader of server-sent event streams, parsing frames the way a browser's EventSource does.

use std::time::Duration;

use reqwest::header::{HeaderMap, ACCEPT_ENCODING, CONTENT_TYPE};
use reqwest::StatusCode;
use serde_json::Value;

/// No test waits longer than this for one frame: a stream that stalls fails instead of hanging.
const FRAME_DEADLINE: Duration = Duration::from_secs(30);

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Frame {
    pub id: Option<String>,
    pub event: Option<String>,
    pub data: Option<String>,
    pub retry: Option<u64>,
    pub comment: bool,
}

impl Frame {
    /// The version an event's id names: a room's stream says `<version>`, or with chat
    /// `<version>:<message>`.
    pub fn version_id(&self) -> Option<i64> {
        let id = self.id.as_deref()?;
        id.split(':').next()?.parse().ok()
    }

    /// The message an event's id names on a room's stream with chat (`<version>:<message>`).
    pub fn chat_id(&self) -> Option<i64> {
        self.id.as_deref()?.split_once(':')?.1.parse().ok()
    }

    /// The data as JSON, for an `event` frame.
    pub fn json(&self) -> Value {
        serde_json::from_str(self.data.as_deref().expect("an event with data")).unwrap()
    }
}

pub struct EventStream {
    pub headers: HeaderMap,
    response: reqwest::Response,
    buffer: String,
}

impl EventStream {
    /// Opens `url` (asking for gzip, which a stream must ignore) with an optional
    /// `Last-Event-ID`; panics unless it answers 200 with `text/event-stream`.
    pub async fn open(client: &reqwest::Client, url: &str, last_event_id: Option<i64>) -> Self {
        Self::resume(client, url, last_event_id.map(|id| id.to_string())).await
    }

    /// Opens `url` as [`Self::open`], resuming after an event's id as the stream wrote it.
    pub async fn resume(
        client: &reqwest::Client,
        url: &str,
        last_event_id: Option<String>,
    ) -> Self {
        let mut request = client.get(url).header(ACCEPT_ENCODING, "gzip");
        if let Some(id) = last_event_id {
            request = request.header("Last-Event-ID", id);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{url}");
        assert_eq!(response.headers()[CONTENT_TYPE], "text/event-stream");
        Self {
            headers: response.headers().clone(),
            response,
            buffer: String::new(),
        }
    }

    /// The next frame; `None` when the server ended the stream.
    pub async fn frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let text: String = self.buffer.drain(..end + 2).collect();
                return Some(parse(&text));
            }
            let chunk = tokio::time::timeout(FRAME_DEADLINE, self.response.chunk())
                .await
                .expect("a frame within the deadline")
                .expect("the stream reads");
            match chunk {
                Some(bytes) => self.buffer.push_str(std::str::from_utf8(&bytes).unwrap()),
                None => return None,
            }
        }
    }

    /// The next event, skipping comments and `retry:`, and who is online (`presence` in a
    /// room, `online` in the lobby), which comes and goes with every viewer.
    pub async fn event(&mut self) -> Frame {
        loop {
            let frame = self.any_event().await;
            if !matches!(frame.event.as_deref(), Some("presence" | "online")) {
                return frame;
            }
        }
    }

    /// The next event of any kind, skipping comments and `retry:`.
    pub async fn any_event(&mut self) -> Frame {
        loop {
            let frame = self.frame().await.expect("the stream is still open");
            if frame.event.is_some() || frame.data.is_some() {
                return frame;
            }
        }
    }

    /// The data of every `version` event up to and including version `last`, checking that
    /// each event's id is its version.
    pub async fn versions_through(&mut self, last: i64) -> Vec<Value> {
        let mut seen = Vec::new();
        loop {
            let frame = self.event().await;
            assert_eq!(frame.event.as_deref(), Some("version"));
            let data = frame.json();
            let version = data["version"].as_i64().unwrap();
            assert_eq!(
                frame.version_id(),
                Some(version),
                "the id names the version"
            );
            seen.push(data);
            if version >= last {
                return seen;
            }
        }
    }
}

fn parse(text: &str) -> Frame {
    let mut frame = Frame::default();
    for line in text.lines().filter(|line| !line.is_empty()) {
        if line.starts_with(':') {
            frame.comment = true;
            continue;
        }
        let (field, value) = line.split_once(": ").unwrap_or((line, ""));
        match field {
            "id" => frame.id = Some(value.to_owned()),
            "event" => frame.event = Some(value.to_owned()),
            "retry" => frame.retry = Some(value.parse().unwrap()),
            "data" => {
                assert!(frame.data.is_none(), "one data line per event: {text}");
                frame.data = Some(value.to_owned());
            }
            other => panic!("unexpected field {other:?} in {text:?}"),
        }
    }
    frame
}

/// The versions of a sequence of events.
pub fn versions(events: &[Value]) -> Vec<i64> {
    events
        .iter()
        .map(|e| e["version"].as_i64().unwrap())
        .collect()
}

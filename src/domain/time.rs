//! Moments, as the platform keeps them: to the millisecond, in UTC. Compared as times; written
//! (in the database, in bodies, to hooks) as RFC 3339 text with milliseconds and `Z`, one width
//! from 1970 to 9999, so that text sorts as time does for `sqlite3` and `psql` readers too.

use std::fmt;
use std::time::Duration;

use chrono::{DateTime, DurationRound, SecondsFormat, Utc};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp(DateTime<Utc>);

impl Timestamp {
    /// Now, to the millisecond.
    pub fn now() -> Self {
        Self::from(Utc::now())
    }

    /// A time written as RFC 3339 text, in any offset.
    pub fn parse(text: &str) -> Option<Self> {
        let at = DateTime::parse_from_rfc3339(text).ok()?;
        Some(Self::from(at.with_timezone(&Utc)))
    }

    /// The time as it is written: `2026-11-28T10:00:00.000Z`.
    pub fn text(&self) -> String {
        self.0.to_rfc3339_opts(SecondsFormat::Millis, true)
    }

    /// `span` later (or as late as can be written).
    pub fn after(self, span: Duration) -> Self {
        let span = chrono::Duration::from_std(span).unwrap_or(chrono::Duration::MAX);
        Self(
            self.0
                .checked_add_signed(span)
                .unwrap_or(DateTime::<Utc>::MAX_UTC),
        )
    }

    /// `span` earlier (or as early as can be written).
    pub fn before(self, span: Duration) -> Self {
        let span = chrono::Duration::from_std(span).unwrap_or(chrono::Duration::MAX);
        Self(
            self.0
                .checked_sub_signed(span)
                .unwrap_or(DateTime::<Utc>::MIN_UTC),
        )
    }

    /// The start of its minute.
    pub fn to_the_minute(self) -> Self {
        Self(
            self.0
                .duration_trunc(chrono::Duration::minutes(1))
                .unwrap_or(self.0),
        )
    }

    /// How long after `earlier` this is (zero if it is not after).
    pub fn since(&self, earlier: Timestamp) -> Duration {
        (self.0 - earlier.0).to_std().unwrap_or_default()
    }

    pub fn as_chrono(&self) -> DateTime<Utc> {
        self.0
    }
}

impl From<DateTime<Utc>> for Timestamp {
    /// Kept to the millisecond, as it is written.
    fn from(at: DateTime<Utc>) -> Self {
        Self(
            at.duration_trunc(chrono::Duration::milliseconds(1))
                .unwrap_or(at),
        )
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text())
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text())
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Timestamp::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not an RFC 3339 time")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_time_reads_back_as_it_was_written_and_compares_as_a_time() {
        let text = "2026-11-28T10:00:59.123Z";
        let at = Timestamp::parse(text).unwrap();
        assert_eq!(at.text(), text);
        assert_eq!(at.to_the_minute().text(), "2026-11-28T10:00:00.000Z");
        let other_offset = Timestamp::parse("2026-11-28T11:00:59.124+01:00").unwrap();
        assert!(at < other_offset);
        assert_eq!(other_offset.since(at), Duration::from_millis(1));
        assert_eq!(
            at.after(Duration::from_secs(1)).text(),
            "2026-11-28T10:01:00.123Z"
        );
        assert!(Timestamp::parse("yesterday").is_none());
    }

    #[test]
    fn now_is_kept_to_the_millisecond() {
        let now = Timestamp::now();
        assert_eq!(Timestamp::parse(&now.text()), Some(now));
    }
}

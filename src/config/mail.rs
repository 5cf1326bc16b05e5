//! The settings of mail: the operator's SMTP server and sender, the server's public address
//! (every link a mail holds starts with it), and how often turn mail may go.

use std::time::Duration;

use crate::domain::public_url::PublicUrl;

/// Mail to players (`--smtp-url` and the rest). Without an SMTP server no mail goes, and the
/// page offers none.
#[derive(Debug, Clone, clap::Args)]
pub struct MailSettings {
    /// The SMTP server mail goes through, with its credentials if it wants some:
    /// `smtps://user:pass@host:465` (TLS), `smtp://user:pass@host:587?tls=required` (STARTTLS),
    /// or `smtp://host:25` (unencrypted, for a relay on the same machine). None: no mail.
    #[arg(global = true, long, env = "SMTP_URL")]
    pub smtp_url: Option<String>,

    /// Who mail comes from, such as `Turnhouse <games@example.org>`.
    #[arg(
        global = true,
        long,
        env = "MAIL_FROM",
        default_value = "turnhouse@localhost"
    )]
    pub mail_from: String,

    /// The address people reach this server at, such as `https://games.example.org`: every
    /// link in a mail starts with it. By default `http://` and the address bound to.
    #[arg(global = true, long, env = "PUBLIC_URL")]
    pub public_url: Option<String>,

    /// How long a player must have been away since a turn began before it is mailed to them
    /// (`10min`, `1h`, `45s`, or seconds).
    #[arg(global = true, long, env = "TURN_MAIL_AFTER", default_value = "10min", value_parser = parse_span)]
    pub turn_mail_after: Span,

    /// At most one mail of a player's turns per this period; it lists every room waiting
    /// (`12h`, `30min`, or seconds).
    #[arg(global = true, long, env = "TURN_MAIL_EVERY", default_value = "12h", value_parser = parse_span)]
    pub turn_mail_every: Span,

    /// How long a turn must have lasted before it is pushed to the player's browsers (`1s`,
    /// `30s`, or seconds; 0 pushes at once): a turn taken within it, by a player at the board,
    /// is never pushed.
    #[arg(global = true, long, env = "PUSH_AFTER", default_value = "1s", value_parser = parse_span)]
    pub push_after: Span,
}

impl Default for MailSettings {
    fn default() -> Self {
        Self {
            smtp_url: None,
            mail_from: "turnhouse@localhost".into(),
            public_url: None,
            turn_mail_after: Span(Duration::from_secs(600)),
            turn_mail_every: Span(Duration::from_secs(12 * 3600)),
            push_after: Span(Duration::from_secs(1)),
        }
    }
}

impl MailSettings {
    /// The public address: `--public-url`, or the one the server binds to.
    pub fn public_url(&self) -> PublicUrl {
        match &self.public_url {
            Some(url) => PublicUrl::given(url),
            None => PublicUrl::default(),
        }
    }
}

/// A span of time as a setting writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span(pub Duration);

/// `45`, `45s`, `10min`, `12h` or `2d`.
pub fn parse_span(text: &str) -> Result<Span, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number
        .parse()
        .map_err(|_| format!("`{text}` is not a span of time such as 45s, 10min, 12h or 2d"))?;
    let unit = match unit.trim() {
        "" | "s" => 1,
        "min" | "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        other => {
            return Err(format!(
                "`{other}` is not a unit of time: use s, min, h or d"
            ))
        }
    };
    Ok(Span(Duration::from_secs(number.saturating_mul(unit))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_are_read_as_written() {
        let secs = |text: &str| parse_span(text).unwrap().0.as_secs();
        assert_eq!(secs("45"), 45);
        assert_eq!(secs("45s"), 45);
        assert_eq!(secs("10min"), 600);
        assert_eq!(secs("12h"), 43_200);
        assert_eq!(secs("2d"), 172_800);
        for bad in ["", "h", "10 weeks", "-5", "1.5h"] {
            assert!(parse_span(bad).is_err(), "{bad}");
        }
    }
}

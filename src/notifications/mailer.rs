//! Mail out through the operator's SMTP server (lettre): plain text and HTML in one message,
//! and for mail a player can stop, the one-click unsubscribe of RFC 8058.

use std::time::Duration;

use lettre::message::header::{HeaderName, HeaderValue};
use lettre::message::{Mailbox, MultiPart};
use lettre::transport::smtp::Error as SmtpError;
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};

use crate::domain::notices::Letter;

/// How long one mail may take to hand over.
const SEND_TIMEOUT: Duration = Duration::from_secs(30);

/// Why a mail did not go.
#[derive(Debug, thiserror::Error)]
pub enum MailError {
    /// It never will (the server refused it for good, or the address is not one).
    #[error("{0}")]
    Permanent(String),
    /// It may go later.
    #[error("{0}")]
    Transient(String),
}

/// The SMTP server, and who mail comes from.
pub struct Mailer {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

/// Why mail cannot be set up as configured.
#[derive(Debug, thiserror::Error)]
pub enum MailSetupError {
    #[error("--smtp-url is not a URL lettre understands (smtp://, smtps://): {0}")]
    Url(String),
    #[error("--mail-from is not a mailbox such as `Turnhouse <games@example.org>`: {0}")]
    From(String),
}

impl Mailer {
    pub fn new(smtp_url: &str, from: &str) -> Result<Self, MailSetupError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(|err| MailSetupError::Url(err.to_string()))?
            .timeout(Some(SEND_TIMEOUT))
            .build();
        let from = from
            .parse::<Mailbox>()
            .map_err(|err| MailSetupError::From(err.to_string()))?;
        Ok(Self { transport, from })
    }

    /// Sends `letter` to `to`; with `unsubscribe`, the link that stops such mail, in the
    /// headers a mail client shows as a button (RFC 8058).
    pub async fn send(
        &self,
        to: &str,
        letter: &Letter,
        unsubscribe: Option<&str>,
    ) -> Result<(), MailError> {
        let to: Mailbox = to
            .parse()
            .map_err(|err| MailError::Permanent(format!("`{to}` is not an address: {err}")))?;
        let mut builder = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(letter.subject.as_str());
        if let Some(url) = unsubscribe {
            builder = builder
                .raw_header(header("List-Unsubscribe", format!("<{url}>")))
                .raw_header(header(
                    "List-Unsubscribe-Post",
                    "List-Unsubscribe=One-Click".into(),
                ));
        }
        let message = builder
            .multipart(MultiPart::alternative_plain_html(
                letter.text.clone(),
                letter.html.clone(),
            ))
            .map_err(|err| MailError::Permanent(format!("the mail cannot be made: {err}")))?;
        match self.transport.send(message).await {
            Ok(_) => Ok(()),
            Err(err) => Err(classify(err)),
        }
    }
}

fn header(name: &str, value: String) -> HeaderValue {
    let name = HeaderName::new_from_ascii(name.to_owned()).expect("a valid header name");
    HeaderValue::new(name, value)
}

/// A 5xx answer is for good; anything else (4xx, no connection, a timeout) may pass.
fn classify(err: SmtpError) -> MailError {
    let text = err.to_string();
    match err.is_permanent() {
        true => MailError::Permanent(text),
        false => MailError::Transient(text),
    }
}

//! Every mail's words, in plain text and HTML from the same parts: what happened, the links to
//! act on, and a footer naming the server that sent it. Text given is always escaped in the
//! HTML: names and addresses are players' own.

use super::notices::Letter;

/// A link in a mail: what it does, and where.
pub struct Link<'a> {
    pub label: &'a str,
    pub url: &'a str,
}

/// A mail from the server at `public_url`: `paragraphs` of plain words, `links` to act on,
/// and why the player gets it (with how to stop, when they can).
pub fn letter(
    public_url: &str,
    subject: &str,
    paragraphs: &[String],
    links: &[Link],
    why: &str,
) -> Letter {
    let mut text = String::new();
    let mut html = String::from(
        "<!doctype html><html><body style=\"font-family: sans-serif; line-height: 1.5\">",
    );
    for paragraph in paragraphs {
        text.push_str(paragraph);
        text.push_str("\n\n");
        html.push_str(&format!("<p>{}</p>", escape(paragraph)));
    }
    for link in links {
        text.push_str(&format!("{}: {}\n", link.label, link.url));
        html.push_str(&format!(
            "<p><a href=\"{}\">{}</a></p>",
            escape(link.url),
            escape(link.label)
        ));
    }
    let footer = format!("Sent by the Turnhouse server at {public_url}. {why}");
    text.push_str(&format!("\n-- \n{footer}\n"));
    html.push_str(&format!(
        "<hr><p style=\"color: #666; font-size: small\">{}</p></body></html>",
        escape(&footer)
    ));
    Letter {
        subject: subject.to_owned(),
        text,
        html,
    }
}

/// `text` safe inside HTML, in an element or an attribute.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn players_words_are_escaped_in_the_html_and_kept_in_the_text() {
        let made = letter(
            "https://games.example",
            "Hello",
            &["<b>bob</b> & co".to_owned()],
            &[Link {
                label: "Open",
                url: "https://games.example/#/room/1?a=\"x\"",
            }],
            "You asked for it.",
        );
        assert!(made.text.contains("<b>bob</b> & co"));
        assert!(made.html.contains("&lt;b&gt;bob&lt;/b&gt; &amp; co"));
        assert!(made
            .html
            .contains("href=\"https://games.example/#/room/1?a=&quot;x&quot;\""));
        assert!(made
            .text
            .contains("Turnhouse server at https://games.example"));
    }
}

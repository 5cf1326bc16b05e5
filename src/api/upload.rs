//! Reading a game upload, in any of the three forms `PUT /games/{id}` takes: the raw source
//! (`Content-Type: application/javascript`, settings in the query string), JSON
//! `{"source"?, "frontend"?, …}`, or `multipart/form-data` with a `source` file, a `frontend`
//! file (one `.html`, or a build folder as a `.zip` or `.tar.gz`) and settings as fields.
//! Whatever the form, settings may also come in the query string; the body's win.

use actix_multipart::Multipart;
use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest};
use futures_util::future::LocalBoxFuture;
use futures_util::StreamExt;
use serde::Deserialize;

use super::extract::{parse_json, parse_query, read_body_within, upload_time};
use super::ApiError;
use crate::catalog::{
    CatalogError, FieldUpdate, FrontendUpload, GameUpload, MAX_DESCRIPTION_CHARS,
    MAX_FRONTEND_BYTES, MAX_NAME_CHARS, MAX_SOURCE_BYTES,
};
use crate::domain::records::DEFAULT_FRONTEND_BACKGROUND;
use crate::frontend::{FrontendError, MAX_UPLOAD_BYTES};

/// The largest settings field of a form.
const MAX_FORM_FIELD_BYTES: usize = 4 * 1024;
/// The most parts a form may have: two files and every setting, with room to spare.
const MAX_FORM_PARTS: usize = 16;
/// A frame's height, in pixels.
const FRONTEND_HEIGHTS: std::ops::RangeInclusive<u32> = 200..=2000;

/// What an author may say about a game, in the JSON body, a form or the query string.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct GameSettings {
    name: Option<String>,
    description: Option<String>,
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    min_players: Option<usize>,
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    max_players: Option<usize>,
    frontend_background: Option<String>,
    #[serde(default, deserialize_with = "super::extract::whole_number")]
    frontend_height: Option<usize>,
    /// Whether players may talk in the game's rooms (`false` where talking is cheating).
    chat: Option<bool>,
}

impl GameSettings {
    /// These settings, each left unset taken from `fallback`.
    fn or(self, fallback: GameSettings) -> GameSettings {
        GameSettings {
            name: self.name.or(fallback.name),
            description: self.description.or(fallback.description),
            min_players: self.min_players.or(fallback.min_players),
            max_players: self.max_players.or(fallback.max_players),
            frontend_background: self.frontend_background.or(fallback.frontend_background),
            frontend_height: self.frontend_height.or(fallback.frontend_height),
            chat: self.chat.or(fallback.chat),
        }
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct UploadBody {
    source: Option<String>,
    #[serde(default, deserialize_with = "carried")]
    frontend: FieldUpdate<String>,
    #[serde(default, deserialize_with = "carried")]
    move_example: FieldUpdate<serde_json::Value>,
    #[serde(flatten)]
    settings: GameSettings,
}

/// A field that is absent keeps the previous version's value (the default), `null` removes
/// it, anything else sets it.
fn carried<'de, D, T>(d: D) -> Result<FieldUpdate<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(match Option::<T>::deserialize(d)? {
        Some(value) => FieldUpdate::Set(value),
        None => FieldUpdate::Remove,
    })
}

/// A game upload, read and checked as far as the edge can: sizes, settings and shapes. The
/// frontend is unpacked later, by the engine, once the caller has passed the upload limit.
pub struct Upload(pub GameUpload);

/// What the body holds, before the settings are checked.
struct Sent {
    source: Option<String>,
    frontend: FieldUpdate<FrontendUpload>,
    move_example: FieldUpdate<serde_json::Value>,
    settings: GameSettings,
}

impl FromRequest for Upload {
    type Error = ApiError;
    type Future = LocalBoxFuture<'static, Result<Self, ApiError>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let query: Result<GameSettings, ApiError> = parse_query(req);
        let sent: LocalBoxFuture<'static, Result<Sent, ApiError>> = match media_type(req).as_str() {
            "application/javascript" | "text/javascript" => {
                let body = read_body_within(req, payload, MAX_SOURCE_BYTES);
                Box::pin(async move {
                    Ok(Sent {
                        source: Some(utf8_source(&body.await?)?),
                        frontend: FieldUpdate::Keep,
                        move_example: FieldUpdate::Keep,
                        settings: GameSettings::default(),
                    })
                })
            }
            "multipart/form-data" => {
                let form = Multipart::new(req.headers(), payload.take());
                let time = upload_time(req, MAX_UPLOAD_BYTES);
                Box::pin(async move {
                    match tokio::time::timeout(time, read_form(form)).await {
                        Ok(sent) => sent,
                        Err(_) => Err(ApiError::BodyTimeout(time.as_secs())),
                    }
                })
            }
            media => {
                // JSON escapes can double a source's size (and more, for control characters).
                let limit = (MAX_SOURCE_BYTES + MAX_FRONTEND_BYTES) * 2 + 64 * 1024;
                let body = read_body_within(req, payload, limit);
                let declared = media == "application/json";
                let media = media.to_owned();
                Box::pin(async move {
                    read_json(&body.await?).map_err(|err| match err {
                        // Most often the source itself, sent without saying what it is (curl's
                        // `--data-binary` says form data): say how to send it.
                        ApiError::MalformedJson(why) if !declared => {
                            ApiError::MalformedJson(format!(
                                "{why}; the body was read as JSON since its Content-Type is {}: \
                                 to upload the source itself, send it with \
                                 `Content-Type: application/javascript`",
                                match media.is_empty() {
                                    true => "missing".to_owned(),
                                    false => format!("`{media}`"),
                                }
                            ))
                        }
                        other => other,
                    })
                })
            }
        };
        Box::pin(async move {
            let query = query?;
            let sent = sent.await?;
            checked(Sent {
                settings: sent.settings.or(query),
                ..sent
            })
        })
    }
}

/// The request's media type, lowercase, without parameters.
fn media_type(req: &HttpRequest) -> String {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .map(|v| v.trim().to_ascii_lowercase())
        .unwrap_or_default()
}

fn utf8_source(bytes: &[u8]) -> Result<String, ApiError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| ApiError::InvalidBody("the source must be UTF-8 text".into()))
}

fn read_json(bytes: &[u8]) -> Result<Sent, ApiError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(ApiError::MalformedJson(
            "the body is empty: send the source as JSON {\"source\": …}, as the body with \
             Content-Type: application/javascript, or as a multipart/form-data upload"
                .into(),
        ));
    }
    let body: UploadBody = parse_json(bytes)?;
    let frontend = match body.frontend {
        FieldUpdate::Set(page) => {
            if page.len() > MAX_FRONTEND_BYTES {
                return Err(ApiError::PayloadTooLarge(MAX_FRONTEND_BYTES));
            }
            if page.trim().is_empty() {
                return Err(ApiError::InvalidBody(
                    "frontend is an HTML document; send null to remove it".into(),
                ));
            }
            FieldUpdate::Set(FrontendUpload::page(page))
        }
        FieldUpdate::Keep => FieldUpdate::Keep,
        FieldUpdate::Remove => FieldUpdate::Remove,
    };
    Ok(Sent {
        source: body.source,
        frontend,
        move_example: body.move_example,
        settings: body.settings,
    })
}

/// Reads a form part by part, refusing each as soon as it passes its limit (never reading a
/// large body to its end first).
async fn read_form(mut form: Multipart) -> Result<Sent, ApiError> {
    let mut sent = Sent {
        source: None,
        frontend: FieldUpdate::Keep,
        move_example: FieldUpdate::Keep,
        settings: GameSettings::default(),
    };
    let mut seen: Vec<String> = Vec::new();
    while let Some(part) = form.next().await {
        let mut part = part.map_err(|e| ApiError::InvalidBody(format!("the form: {e}")))?;
        let name = part.name().unwrap_or_default().to_owned();
        if seen.contains(&name) {
            return Err(ApiError::InvalidBody(format!(
                "the form has `{name}` twice"
            )));
        }
        if seen.len() == MAX_FORM_PARTS {
            return Err(ApiError::InvalidBody(format!(
                "a form has at most {MAX_FORM_PARTS} parts"
            )));
        }
        seen.push(name.clone());
        let file_name = part
            .content_disposition()
            .and_then(|d| d.get_filename())
            .map(str::to_owned);
        match name.as_str() {
            "source" => {
                let bytes = read_part(&mut part, MAX_SOURCE_BYTES)
                    .await?
                    .ok_or(ApiError::PayloadTooLarge(MAX_SOURCE_BYTES))?;
                sent.source = Some(utf8_source(&bytes)?);
            }
            "frontend" => {
                let bytes = read_part(&mut part, MAX_UPLOAD_BYTES)
                    .await?
                    .ok_or_else(|| {
                        CatalogError::InvalidFrontend(FrontendError::entry(
                            file_name.as_deref().unwrap_or("frontend"),
                            format!(
                                "the upload is over {} MiB: a build folder is sent compressed, as \
                             a .zip or .tar.gz",
                                MAX_UPLOAD_BYTES >> 20
                            ),
                        ))
                    })?;
                sent.frontend = FieldUpdate::Set(FrontendUpload {
                    bytes,
                    name: file_name,
                });
            }
            field => {
                let bytes = read_part(&mut part, MAX_FORM_FIELD_BYTES)
                    .await?
                    .ok_or_else(|| {
                        ApiError::InvalidBody(format!(
                            "`{field}` is longer than {MAX_FORM_FIELD_BYTES} bytes"
                        ))
                    })?;
                let text = String::from_utf8(bytes)
                    .map_err(|_| ApiError::InvalidBody(format!("`{field}` must be UTF-8 text")))?;
                form_setting(&mut sent, field, text)?;
            }
        }
    }
    // An empty form changes nothing, as JSON `{}` does: the engine says what a first version
    // lacks, or publishes the next version as the last one was.
    Ok(sent)
}

/// One settings field of a form, read as the query string's would be.
fn form_setting(sent: &mut Sent, field: &str, text: String) -> Result<(), ApiError> {
    let whole = |text: &str| -> Result<Option<usize>, ApiError> {
        text.trim().parse::<usize>().map(Some).map_err(|_| {
            ApiError::InvalidBody(format!("`{field}` must be a whole number, not `{text}`"))
        })
    };
    let settings = &mut sent.settings;
    match field {
        "name" => settings.name = Some(text),
        "description" => settings.description = Some(text),
        "minPlayers" => settings.min_players = whole(&text)?,
        "maxPlayers" => settings.max_players = whole(&text)?,
        "frontendBackground" => settings.frontend_background = Some(text),
        "frontendHeight" => settings.frontend_height = whole(&text)?,
        "chat" => {
            settings.chat = Some(text.trim().parse::<bool>().map_err(|_| {
                ApiError::InvalidBody(format!("`chat` must be true or false, not `{text}`"))
            })?)
        }
        // An empty field is no example, as a form leaves a field it has no value for.
        "moveExample" if text.trim().is_empty() => sent.move_example = FieldUpdate::Remove,
        "moveExample" => {
            // A form field is text by its nature: text that is not JSON is a setting the game
            // cannot take, as an oversized example is.
            let example = serde_json::from_str(&text).map_err(|e| {
                CatalogError::InvalidGameSettings(format!("`moveExample` must be JSON: {e}"))
            })?;
            sent.move_example = FieldUpdate::Set(example);
        }
        other => {
            return Err(ApiError::InvalidBody(format!(
                "unknown form field `{other}`: expected source, frontend, name, description, \
                 minPlayers, maxPlayers, moveExample, frontendBackground, frontendHeight or chat"
            )))
        }
    }
    Ok(())
}

/// A part's bytes, or `None` as soon as it passes `limit`.
async fn read_part(
    part: &mut actix_multipart::Field,
    limit: usize,
) -> Result<Option<Vec<u8>>, ApiError> {
    let mut bytes = Vec::new();
    while let Some(chunk) = part.next().await {
        let chunk = chunk.map_err(|e| ApiError::BadPayload(e.to_string()))?;
        if bytes.len() + chunk.len() > limit {
            return Ok(None);
        }
        bytes.extend_from_slice(&chunk);
    }
    Ok(Some(bytes))
}

/// The upload, once every check the edge can make has passed.
fn checked(sent: Sent) -> Result<Upload, ApiError> {
    if sent
        .source
        .as_ref()
        .is_some_and(|s| s.len() > MAX_SOURCE_BYTES)
    {
        return Err(ApiError::PayloadTooLarge(MAX_SOURCE_BYTES));
    }
    let settings = sent.settings;
    validate_text("name", settings.name.as_deref(), 1, MAX_NAME_CHARS)?;
    validate_text(
        "description",
        settings.description.as_deref(),
        0,
        MAX_DESCRIPTION_CHARS,
    )?;
    if let Some(colour) = &settings.frontend_background {
        if !is_css_colour(colour) {
            return Err(CatalogError::InvalidGameSettings(format!(
                "frontendBackground must be a CSS colour (a name such as {DEFAULT_FRONTEND_BACKGROUND}, \
                 #rgb, #rrggbb, #rrggbbaa, rgb(…) or hsl(…)), not `{colour}`"
            ))
            .into());
        }
    }
    let frontend_height = match settings.frontend_height {
        None => None,
        Some(height) => match u32::try_from(height) {
            Ok(height) if FRONTEND_HEIGHTS.contains(&height) => Some(height),
            _ => {
                return Err(CatalogError::InvalidGameSettings(format!(
                    "frontendHeight is in pixels, from {} to {}; got {height}",
                    FRONTEND_HEIGHTS.start(),
                    FRONTEND_HEIGHTS.end()
                ))
                .into())
            }
        },
    };
    Ok(Upload(GameUpload {
        source: sent.source,
        name: settings.name,
        description: settings.description,
        min_players: settings.min_players,
        max_players: settings.max_players,
        frontend: sent.frontend,
        frontend_background: settings.frontend_background,
        frontend_height,
        move_example: sent.move_example,
        chat: settings.chat,
    }))
}

fn validate_text(field: &str, value: Option<&str>, min: usize, max: usize) -> Result<(), ApiError> {
    match value {
        Some(text) if !(min..=max).contains(&text.chars().count()) => Err(ApiError::InvalidBody(
            format!("{field} must be {min} to {max} characters"),
        )),
        _ => Ok(()),
    }
}

/// A CSS colour the page can set as a frame's background: a named colour, a hex colour, or a
/// functional one (`rgb(…)`, `hsl(…)` and their kin) of numbers alone. Nothing else can reach
/// the style, so no value can carry more than a colour.
fn is_css_colour(text: &str) -> bool {
    let text = text.trim();
    if text.is_empty() || text.len() > 64 {
        return false;
    }
    if let Some(hex) = text.strip_prefix('#') {
        return [3, 4, 6, 8].contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit());
    }
    if text.chars().all(|c| c.is_ascii_alphabetic()) {
        return true;
    }
    let Some((function, rest)) = text.split_once('(') else {
        return false;
    };
    let Some(arguments) = rest.strip_suffix(')') else {
        return false;
    };
    [
        "rgb", "rgba", "hsl", "hsla", "hwb", "lab", "lch", "oklab", "oklch",
    ]
    .contains(&function.to_ascii_lowercase().as_str())
        && arguments.chars().all(|c| {
            c.is_ascii_digit() || " .,%/-+".contains(c) || c == 'e' || c == 'd' || c == 'g'
        })
}

#[cfg(test)]
mod tests {
    use super::is_css_colour;

    #[test]
    fn colours_are_colours_and_nothing_more() {
        for good in [
            "white",
            "#121212",
            "#abc",
            "#11223344",
            "rgb(18, 18, 18)",
            "hsl(210deg 20% 10%)",
            "rgba(0,0,0,.5)",
        ] {
            assert!(is_css_colour(good), "{good}");
        }
        for bad in [
            "",
            "#12",
            "#ggg",
            "red; color: blue",
            "url(x)",
            "rgb(1,2,3) url(x)",
            "expression(alert(1))",
            "rgb(calc(1))",
        ] {
            assert!(!is_css_colour(bad), "{bad}");
        }
    }
}

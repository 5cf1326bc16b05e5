//! Sessions: signing in on another device (with a sign-in code), listing and ending one's
//! sessions, and signing out. A player's first session is opened when they sign up
//! (`POST /players`).

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};

use super::extract::{client_address, Json, Signed};
use super::{route, ApiError, AppContext, RouteDef};
use crate::accounts::AccountError;
use crate::domain::time::Timestamp;
use crate::game::PlayerRef;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::POST, "/sessions", sign_in),
        route(Method::DELETE, "/sessions/current", sign_out),
        route(Method::GET, "/players/me/sessions", list),
        route(Method::DELETE, "/players/me/sessions", end_others),
        route(Method::DELETE, "/players/me/sessions/{id}", end_one),
        route(Method::POST, "/players/me/sign-in-codes", new_code),
        route(Method::PUT, "/players/me/password", set_password),
    ]
}

/// A session just opened: the player, and the token (shown this once).
#[derive(Serialize)]
pub(super) struct Opened {
    id: String,
    username: String,
    token: String,
    session: String,
}

impl Opened {
    pub(super) fn new(player: &PlayerRef, session: &str, token: String) -> Self {
        Self {
            id: player.id.to_string(),
            username: player.username.clone(),
            token,
            session: session.to_owned(),
        }
    }
}

/// `value` of `field`, refused with `400 invalid_body` past `max` characters (as
/// `openapi.yaml` bounds it).
pub(super) fn within(field: &str, value: &str, max: usize) -> Result<(), ApiError> {
    match value.chars().count() > max {
        true => Err(ApiError::InvalidBody(format!(
            "{field} is at most {max} characters"
        ))),
        false => Ok(()),
    }
}

/// The longest a device's label may be, in characters.
const LABEL_LENGTH: usize = 64;

/// What a device calls itself: the client's `label` (at most 64 characters), else the browser
/// and system its `User-Agent` names ("Firefox on Linux"), else "A device".
pub(super) fn device_label(req: &HttpRequest, label: Option<String>) -> Result<String, ApiError> {
    if let Some(label) = &label {
        within("label", label, LABEL_LENGTH)?;
    }
    if let Some(label) = label.filter(|l| !l.trim().is_empty()) {
        return Ok(label);
    }
    let agent = req
        .headers()
        .get(actix_web::http::header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let browser = [
        ("Edg/", "Edge"),
        ("Firefox/", "Firefox"),
        ("Chrome/", "Chrome"),
        ("Safari/", "Safari"),
        ("curl/", "curl"),
    ]
    .into_iter()
    .find(|(mark, _)| agent.contains(mark))
    .map(|(_, name)| name);
    let system = [
        ("Android", "Android"),
        ("iPhone", "iPhone"),
        ("iPad", "iPad"),
        ("Windows", "Windows"),
        ("Mac OS", "macOS"),
        ("Linux", "Linux"),
    ]
    .into_iter()
    .find(|(mark, _)| agent.contains(mark))
    .map(|(_, name)| name);
    Ok(match (browser, system) {
        (Some(browser), Some(system)) => format!("{browser} on {system}"),
        (Some(browser), None) => browser.to_owned(),
        (None, Some(system)) => format!("A browser on {system}"),
        (None, None) => String::new(),
    })
}

/// A sign-in: with a code shown on another device, or with a name and password.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    code: Option<String>,
    username: Option<String>,
    password: Option<String>,
    label: Option<String>,
}

/// Opens a session with a sign-in code, or a name and password.
async fn sign_in(
    req: HttpRequest,
    context: web::Data<AppContext>,
    Json(body): Json<SignIn>,
) -> Result<HttpResponse, ApiError> {
    let address = client_address(&req);
    // Every attempt counts, so guessing codes or passwords is as slow as the limit makes it.
    let limits = &context.limits;
    limits.sign_ins.admit(&address)?;
    let label = device_label(&req, body.label)?;
    for (field, value, max) in [
        ("code", &body.code, 64),
        ("username", &body.username, 64),
        ("password", &body.password, 4096),
    ] {
        if let Some(value) = value {
            within(field, value, max)?;
        }
    }
    let accounts = &context.accounts;
    let (session, token) = match (body.code, body.username, body.password) {
        (Some(code), None, None) => accounts.sign_in_with_code(&code, &label).await?,
        (None, Some(username), Some(password)) => {
            let guess = Guess::at(&req, &username);
            guess.check(limits)?;
            match accounts
                .sign_in_with_password(&username, &password, &label)
                .await
            {
                Err(AccountError::InvalidCredentials) => {
                    guess.failed(limits);
                    return Err(AccountError::InvalidCredentials.into());
                }
                other => other?,
            }
        }
        _ => {
            return Err(ApiError::InvalidBody(
                "sign in with {\"code\"} or with {\"username\", \"password\"}".into(),
            ))
        }
    };
    Ok(HttpResponse::Created().json(Opened::new(&session.player, &session.id, token)))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NewPassword {
    password: String,
    current_password: Option<String>,
}

/// Sets the caller's password (giving the current one, if they have one); every other session
/// ends. Wrong guesses at the current password are slowed as sign-ins' are, by account and
/// address and by account alone: a stolen token is no faster a way to guess it.
async fn set_password(
    req: HttpRequest,
    context: web::Data<AppContext>,
    Signed(me): Signed,
    Json(body): Json<NewPassword>,
) -> Result<HttpResponse, ApiError> {
    if let Some(current) = &body.current_password {
        within("currentPassword", current, 4096)?;
    }
    let limits = &context.limits;
    limits.actions.admit(&me.player.id)?;
    let guess = Guess::at(&req, &me.player.username);
    guess.check(limits)?;
    let set = context
        .accounts
        .set_password(&me, &body.password, body.current_password.as_deref())
        .await;
    if let Err(AccountError::InvalidCredentials) = &set {
        guess.failed(limits);
    }
    set?;
    Ok(HttpResponse::NoContent().finish())
}

/// A guess at an account's password, slowed for whoever guesses, by their address (so a
/// stranger cannot lock the owner out), and for everyone only past a much higher ceiling
/// (guessing spread over many addresses). Names ignore case.
struct Guess {
    account: String,
    from_here: String,
}

impl Guess {
    fn at(req: &HttpRequest, username: &str) -> Self {
        let address = client_address(req);
        let account = username.to_lowercase();
        Self {
            from_here: format!("{account} {address}"),
            account,
        }
    }

    /// `429` while either limit is spent.
    fn check(&self, limits: &super::limits::Limits) -> Result<(), ApiError> {
        limits.password_failures.check(&self.from_here)?;
        limits.account_failures.check(&self.account)?;
        Ok(())
    }

    /// The guess was wrong: it counts against both.
    fn failed(&self, limits: &super::limits::Limits) {
        limits.password_failures.take(&self.from_here).ok();
        limits.account_failures.take(&self.account).ok();
    }
}

/// Ends the session the request was made with.
async fn sign_out(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    let current = me.session.clone();
    context.accounts.end_session(&me, &current).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SessionView<'a> {
    id: &'a str,
    label: &'a str,
    created_at: &'a Timestamp,
    last_used_at: &'a Timestamp,
    current: bool,
}

#[derive(Serialize)]
struct SessionList<'a> {
    sessions: Vec<SessionView<'a>>,
}

async fn list(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    let sessions = context.accounts.sessions_of(&me).await?;
    let sessions = sessions
        .iter()
        .map(|s| SessionView {
            id: &s.id,
            label: &s.label,
            created_at: &s.created_at,
            last_used_at: &s.last_used_at,
            current: s.id == me.session,
        })
        .collect();
    Ok(HttpResponse::Ok().json(SessionList { sessions }))
}

#[derive(Serialize)]
struct Ended {
    ended: usize,
}

/// Signs out everywhere else.
async fn end_others(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    let ended = context.accounts.end_other_sessions(&me).await?;
    Ok(HttpResponse::Ok().json(Ended { ended }))
}

async fn end_one(
    context: web::Data<AppContext>,
    path: web::Path<String>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    let id = path.into_inner();
    if !crate::domain::ids::is_well_formed(&id) {
        return Err(AccountError::SessionNotFound.into());
    }
    context.accounts.end_session(&me, &id).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Code {
    code: String,
    expires_at: Timestamp,
}

/// A code for signing in on another device: once, within ten minutes.
async fn new_code(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    (context.limits.sign_in_codes).admit(&me.player.id)?;
    let (code, expires_at) = context.accounts.issue_sign_in_code(&me).await?;
    Ok(HttpResponse::Created().json(Code { code, expires_at }))
}

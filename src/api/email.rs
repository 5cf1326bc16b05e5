//! A player's e-mail: their address (confirmed by a mailed link), getting an account back by
//! it, what mail they want, and the one-click unsubscribe links mail carries.

use actix_web::http::Method;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::Deserialize;
use serde_json::json;

use super::extract::{client_address, parse_query, Caller, Json, Signed};
use super::sessions::within;
use super::{route, ApiError, AppContext, RouteDef};
use crate::accounts::{parse_address, AccountError, MAX_ADDRESS};
use crate::domain::letters::escape;
use crate::engine::EngineError;
use crate::notifications::MailKind;

pub fn routes() -> Vec<RouteDef> {
    vec![
        route(Method::GET, "/features", features),
        route(Method::GET, "/players/me/email", email),
        route(Method::PUT, "/players/me/email", set_email),
        route(Method::DELETE, "/players/me/email", remove_email),
        route(Method::PUT, "/players/me/mail", set_mail),
        route(Method::PUT, "/players/me/muted-rooms/{room}", mute),
        route(Method::DELETE, "/players/me/muted-rooms/{room}", unmute),
        route(Method::POST, "/email-verifications", verify),
        route(Method::POST, "/password-resets", request_reset),
        route(Method::POST, "/password-resets/confirm", reset),
        route(Method::GET, "/mail/unsubscribe", unsubscribe_page),
        route(Method::POST, "/mail/unsubscribe", unsubscribe),
    ]
}

/// What this server offers beyond the game: whether it sends mail.
async fn features(context: web::Data<AppContext>) -> HttpResponse {
    HttpResponse::Ok().json(json!({ "mail": context.accounts.sends_mail() }))
}

/// The caller's address, settings and muted rooms.
async fn email(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    let view = context.accounts.email(&me).await?;
    let (_, muted) = context.notifications.settings(&me.player.id).await?;
    let verified = view.verified.as_ref();
    Ok(HttpResponse::Ok()
        .insert_header(("Cache-Control", "no-store"))
        .json(json!({
            "mail": view.enabled,
            "address": verified.map(|e| &e.address),
            "verifiedAt": verified.map(|e| e.verified_at),
            "pending": view.pending,
            "turnMail": verified.is_some_and(|e| e.turn_mail),
            "clockMail": verified.is_some_and(|e| e.clock_mail),
            "mutedRooms": muted,
        })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct NewAddress {
    email: String,
}

/// Mails a link to the address; it becomes the caller's once followed.
async fn set_email(
    context: web::Data<AppContext>,
    Signed(me): Signed,
    Json(body): Json<NewAddress>,
) -> Result<HttpResponse, ApiError> {
    within("email", &body.email, MAX_ADDRESS)?;
    let address = parse_address(&body.email)?;
    let limits = &context.limits;
    limits
        .mail_links
        .admit(&format!("player:{}", me.player.id))?;
    limits
        .mail_links
        .admit(&format!("address:{}", address.to_lowercase()))?;
    let pending = context.accounts.set_email(&me, &address).await?;
    Ok(HttpResponse::Accepted().json(json!({ "pending": pending })))
}

async fn remove_email(
    context: web::Data<AppContext>,
    Signed(me): Signed,
) -> Result<HttpResponse, ApiError> {
    context.accounts.remove_email(&me).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct MailChoice {
    turn_mail: Option<bool>,
    clock_mail: Option<bool>,
}

/// Turns the caller's turn mail and clock mail on or off.
async fn set_mail(
    context: web::Data<AppContext>,
    Caller(me): Caller,
    Json(body): Json<MailChoice>,
) -> Result<HttpResponse, ApiError> {
    let notifications = &context.notifications;
    notifications
        .set_mail(&me.id, body.turn_mail, body.clock_mail)
        .await?;
    let (email, _) = notifications.settings(&me.id).await?;
    let email = email.as_ref();
    Ok(HttpResponse::Ok().json(json!({
        "turnMail": email.is_some_and(|e| e.turn_mail),
        "clockMail": email.is_some_and(|e| e.clock_mail),
    })))
}

async fn mute(
    context: web::Data<AppContext>,
    Caller(me): Caller,
    room: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    muted(context, me, room.into_inner(), true).await
}

async fn unmute(
    context: web::Data<AppContext>,
    Caller(me): Caller,
    room: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    muted(context, me, room.into_inner(), false).await
}

/// Mutes one of the caller's rooms, or hears of it again.
async fn muted(
    context: web::Data<AppContext>,
    me: crate::game::PlayerRef,
    room: String,
    muted: bool,
) -> Result<HttpResponse, ApiError> {
    let found = context.rooms.room(&room).await?;
    let member = found.is_player(&me.id) || found.inactive_players.iter().any(|p| p.id == me.id);
    if !member {
        return Err(EngineError::NotAPlayer.into());
    }
    context.notifications.mute(&me.id, &room, muted).await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkToken {
    token: String,
}

/// Follows a link that confirms an address.
async fn verify(
    context: web::Data<AppContext>,
    Json(body): Json<LinkToken>,
) -> Result<HttpResponse, ApiError> {
    within("token", &body.token, 128)?;
    let (player, address) = context.accounts.verify_email(&body.token).await?;
    Ok(HttpResponse::Ok().json(json!({ "player": player, "address": address })))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ResetAsked {
    username: Option<String>,
    email: Option<String>,
}

/// Mails a reset link to the account, if there is one. The answer is made before the account
/// is looked for, so it is the same, in the same time, whether there is one or not.
async fn request_reset(
    req: HttpRequest,
    context: web::Data<AppContext>,
    Json(body): Json<ResetAsked>,
) -> Result<HttpResponse, ApiError> {
    let key = match (body.username, body.email) {
        (Some(name), None) => name,
        (None, Some(address)) => address,
        _ => {
            return Err(ApiError::InvalidBody(
                "ask with {\"username\"} or with {\"email\"}".into(),
            ))
        }
    };
    within("username or email", &key, 320)?;
    if !context.accounts.sends_mail() {
        return Err(AccountError::MailDisabled.into());
    }
    let address = client_address(&req);
    let limits = &context.limits;
    limits.sign_ins.admit(&address)?;
    limits
        .mail_links
        .admit(&format!("reset:{}", key.trim().to_lowercase()))?;
    let accounts = context.accounts.clone();
    tokio::spawn(async move {
        if let Err(err) = accounts.request_reset(&key).await {
            tracing::warn!(error = %err, "a password reset could not be mailed");
        }
    });
    Ok(HttpResponse::Accepted().json(json!({})))
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Reset {
    token: String,
    password: String,
}

/// Follows a reset link: a new password, and every session of the account ends.
async fn reset(
    context: web::Data<AppContext>,
    Json(body): Json<Reset>,
) -> Result<HttpResponse, ApiError> {
    within("token", &body.token, 128)?;
    within("password", &body.password, 4096)?;
    (context.accounts)
        .reset_password(&body.token, &body.password)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

#[derive(Debug, Deserialize)]
struct UnsubscribeQuery {
    token: String,
}

/// The page an unsubscribe link opens: a button that stops the mail (a link alone never does,
/// since mail scanners follow links).
async fn unsubscribe_page(req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let query: UnsubscribeQuery = parse_query(&req)?;
    let body = format!(
        "<form method=\"post\" action=\"/mail/unsubscribe?token={}\">\
         <p>Stop this kind of mail from this server?</p>\
         <button type=\"submit\">Unsubscribe</button></form>",
        escape(&query.token)
    );
    Ok(html_page("Unsubscribe", &body))
}

/// One click (RFC 8058): that kind of mail stops for the link's player.
async fn unsubscribe(
    req: HttpRequest,
    context: web::Data<AppContext>,
) -> Result<HttpResponse, ApiError> {
    let query: UnsubscribeQuery = parse_query(&req)?;
    let kind = context.notifications.unsubscribe(&query.token).await?;
    let what = match kind {
        MailKind::Turns => "mail about games waiting for your move",
        MailKind::Clock => "warnings of clocks running out",
    };
    Ok(html_page(
        "Unsubscribed",
        &format!(
            "<p>You will get no more {what}. Turn it back on from the page's account screen.</p>"
        ),
    ))
}

fn html_page(title: &str, body: &str) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(format!(
            "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
             <title>{title}</title></head><body>{body}</body></html>"
        ))
}

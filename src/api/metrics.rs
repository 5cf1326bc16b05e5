//! `GET /metrics`: the server's figures in the Prometheus text format, for scraping.

use actix_web::{web, HttpResponse};

use super::AppContext;
use crate::metrics::{Exposition, HttpMetrics};

pub async fn show(context: web::Data<AppContext>, http: web::Data<HttpMetrics>) -> HttpResponse {
    let mut out = Exposition::default();
    http.render(&mut out);
    crate::metrics::unreadable::render(&mut out);
    context.rooms.render_metrics(&mut out);
    context.accounts.render_metrics(&mut out);
    context.catalog.render_metrics(&mut out);
    context.notifications.render_metrics(&mut out);
    context.webhooks.render_metrics(&mut out).await;
    out.single(
        "turnhouse_streams_open",
        "gauge",
        "Server-sent event streams open now (rooms and lobby).",
        context.open_streams.get(),
    );
    HttpResponse::Ok()
        .content_type("text/plain; version=0.0.4; charset=utf-8")
        .body(out.finish())
}

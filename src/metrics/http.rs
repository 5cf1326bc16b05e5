//! Requests served, by method, route and status, each with a latency histogram.
//!
//! One stop in the life of a move: `docs/internals.md`.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use actix_web::{web, Error};

use super::histogram::{Histogram, SECONDS};
use super::text::Exposition;

/// `(method, route pattern, status)`. Routes are the patterns the API serves, not request
/// paths, and unknown methods are one label, so the number of series stays small whatever
/// clients send.
type Series = (&'static str, &'static str, u16);

#[derive(Default)]
pub struct HttpMetrics {
    series: RwLock<HashMap<Series, Arc<Histogram>>>,
}

impl HttpMetrics {
    fn histogram(&self, key: Series) -> Arc<Histogram> {
        if let Some(found) = self.series.read().expect("never poisoned").get(&key) {
            return found.clone();
        }
        let mut series = self.series.write().expect("never poisoned");
        series
            .entry(key)
            .or_insert_with(|| Arc::new(Histogram::new(SECONDS)))
            .clone()
    }

    pub fn render(&self, out: &mut Exposition) {
        let series = self.series.read().expect("never poisoned");
        let mut keys: Vec<&Series> = series.keys().collect();
        keys.sort();
        let labels = |(method, route, status): &Series| {
            format!("method=\"{method}\",route=\"{route}\",status=\"{status}\"")
        };
        out.family(
            "turnhouse_http_request_duration_seconds",
            "histogram",
            "Time from a request's arrival to its response's headers (a stream's opening, not its end).",
        );
        for key in &keys {
            series[*key].render(out, "turnhouse_http_request_duration_seconds", &labels(key));
        }
    }
}

fn method_label(method: &Method) -> &'static str {
    const KNOWN: [Method; 9] = [
        Method::GET,
        Method::POST,
        Method::PUT,
        Method::DELETE,
        Method::HEAD,
        Method::OPTIONS,
        Method::PATCH,
        Method::TRACE,
        Method::CONNECT,
    ];
    KNOWN
        .iter()
        .find(|known| *known == method)
        .map_or("other", |known| known.as_str())
}

/// The pattern of the resource that served a request, attached to each resource so metrics
/// need not match the path a second time (`HttpRequest::match_pattern` would).
#[derive(Clone, Copy)]
pub struct RoutePattern(pub &'static str);

/// Middleware (`middleware::from_fn`) that times every request into [`HttpMetrics`].
pub struct RecordRequests;

impl RecordRequests {
    pub async fn record(
        req: ServiceRequest,
        next: Next<impl MessageBody>,
    ) -> Result<ServiceResponse<impl MessageBody>, Error> {
        let started = Instant::now();
        let metrics = req.app_data::<web::Data<HttpMetrics>>().cloned();
        let method = method_label(req.method());
        let response = next.call(req).await?;
        if let Some(metrics) = metrics {
            let route = response
                .request()
                .app_data::<RoutePattern>()
                .map_or("unmatched", |pattern| pattern.0);
            metrics
                .histogram((method, route, response.status().as_u16()))
                .observe(started.elapsed().as_secs_f64());
        }
        Ok(response)
    }
}

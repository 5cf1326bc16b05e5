//! `GET /openapi.yaml`: the API's description as this server serves it, its `servers` naming
//! where the server is reached (the public URL, or the request's own scheme and `Host`), so
//! that a generated client or a documentation viewer pointed at it calls the right place.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};

use super::forwarded::request_origin;

/// The description as written, its `servers` a local default.
const SPEC: &str = include_str!("../../openapi.yaml");
/// The `servers` entry of [`SPEC`], replaced for each request.
const DEFAULT_SERVER: &str = "servers:\n  - url: http://127.0.0.1:8080\n";

pub async fn show(req: HttpRequest) -> HttpResponse {
    // A `Host` that is no plain host name gets a relative server: the spec's own origin.
    let origin = request_origin(&req).unwrap_or_else(|| "/".to_owned());
    HttpResponse::Ok()
        .content_type("application/yaml")
        // The servers named depend on the public URL and the Host: a cache must not keep one
        // answer for another.
        .insert_header((header::CACHE_CONTROL, "no-cache"))
        .insert_header((header::VARY, "Host"))
        .body(with_server(&origin))
}

/// The description, its servers the one at `origin`.
fn with_server(origin: &str) -> String {
    SPEC.replacen(DEFAULT_SERVER, &format!("servers:\n  - url: {origin}\n"), 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_description_names_the_server_it_is_asked_of() {
        assert!(
            SPEC.contains(DEFAULT_SERVER),
            "openapi.yaml's servers changed"
        );
        let spec = with_server("https://games.example.org");
        assert!(spec.contains("servers:\n  - url: https://games.example.org\n"));
        assert!(!spec.contains("127.0.0.1:8080\n"));
        assert_eq!(
            spec.matches("servers:").count(),
            SPEC.matches("servers:").count()
        );
    }
}

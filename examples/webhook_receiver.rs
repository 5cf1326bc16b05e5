//! A webhook receiver for measuring: answers every delivery `200` (after `--delay-ms`, to play
//! a slow receiver), counts them, and tells the count at `GET /count`. It verifies nothing: the
//! tests verify every signature (`tests/receivers/webhooks.py`); here only the server's cost
//! is measured.
//!
//!     cargo run --release --example webhook_receiver -- --port 18300 --delay-ms 2000

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use actix_web::{web, App, HttpResponse, HttpServer};
use clap::Parser;

#[derive(Parser)]
struct Args {
    #[arg(long, default_value_t = 18300)]
    port: u16,
    /// How long each answer waits.
    #[arg(long, default_value_t = 0)]
    delay_ms: u64,
}

#[actix_web::main]
async fn main() -> std::io::Result<()> {
    let args = Args::parse();
    let received = Arc::new(AtomicU64::new(0));
    let delay = Duration::from_millis(args.delay_ms);
    let counted = web::Data::new(received);
    println!("listening on {}", args.port);
    HttpServer::new(move || {
        App::new()
            .app_data(counted.clone())
            .route(
                "/count",
                web::get().to(|count: web::Data<Arc<AtomicU64>>| async move {
                    HttpResponse::Ok().body(count.load(Ordering::Relaxed).to_string())
                }),
            )
            // The body is read, as a receiver that verifies it does (a connection whose request
            // body is left unread is closed, not kept alive for the next delivery).
            .default_service(web::to(
                move |count: web::Data<Arc<AtomicU64>>, _body: web::Bytes| async move {
                    if !delay.is_zero() {
                        tokio::time::sleep(delay).await;
                    }
                    count.fetch_add(1, Ordering::Relaxed);
                    HttpResponse::Ok().finish()
                },
            ))
    })
    // One worker: the receiver shares the machine with the server it measures.
    .workers(1)
    .bind(("127.0.0.1", args.port))?
    .run()
    .await
}

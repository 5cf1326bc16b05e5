//! The client against real receivers on loopback: what each answers is written by hand, so
//! the test says exactly what crossed the connection.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use super::*;

/// A receiver that answers every connection with `answer` (or, with `None`, never answers),
/// and counts the connections it took.
async fn receiver(answer: Option<&'static str>) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let taken = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = taken.clone();
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = vec![0u8; 64 * 1024];
                let _ = socket.read(&mut request).await;
                match answer {
                    Some(answer) => {
                        let _ = socket.write_all(answer.as_bytes()).await;
                        let _ = socket.shutdown().await;
                    }
                    None => tokio::time::sleep(Duration::from_secs(3600)).await,
                }
            });
        }
    });
    (format!("http://{address}"), taken)
}

fn client(allow_private: bool, timeout: Duration) -> OutboundClient {
    OutboundClient::new(Destinations { allow_private }, timeout, 16)
}

#[tokio::test]
async fn an_answer_is_kept_with_its_status_and_first_bytes_only() {
    let body = "accepted, and a long explanation nobody needs";
    let answer = Box::leak(
        format!(
            "HTTP/1.1 202 Accepted\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        )
        .into_boxed_str(),
    );
    let (url, _) = receiver(Some(answer)).await;
    let got = client(true, Duration::from_secs(10))
        .post(&url, &[("webhook-id", "msg_1".into())], b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(got.status, 202);
    assert_eq!(got.body_start, "accepted, and a ");
}

#[tokio::test]
async fn a_redirect_is_an_answer_not_followed() {
    let (target, followed) = receiver(Some(
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    ))
    .await;
    let redirect = Box::leak(
        format!(
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {target}/elsewhere\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
        .into_boxed_str(),
    );
    let (url, _) = receiver(Some(redirect)).await;
    let got = client(true, Duration::from_secs(10))
        .post(&url, &[], b"{}".to_vec())
        .await
        .unwrap();
    assert_eq!(got.status, 307);
    assert_eq!(followed.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_receiver_that_never_answers_times_out_without_holding_up_another() {
    let (silent, _) = receiver(None).await;
    let (quick, _) = receiver(Some("HTTP/1.1 204 No Content\r\nconnection: close\r\n\r\n")).await;
    let client = client(true, Duration::from_millis(500));
    let (slow, fast) = tokio::join!(client.post(&silent, &[], b"{}".to_vec()), async {
        let started = Instant::now();
        let answer = client.post(&quick, &[], b"{}".to_vec()).await;
        (answer, started.elapsed())
    });
    assert_eq!(slow, Err(OutboundError::Timeout(500)));
    let (answer, took) = fast;
    assert_eq!(answer.unwrap().status, 204);
    assert!(
        took < Duration::from_millis(500),
        "waited on the silent one: {took:?}"
    );
}

#[tokio::test]
async fn loopback_and_private_destinations_are_refused_unless_allowed() {
    let (url, taken) = receiver(Some(
        "HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
    ))
    .await;
    let strict = client(false, Duration::from_secs(5));
    // Plain http is refused before anything else, and so is the address written in the URL.
    assert_eq!(
        strict.post(&url, &[], Vec::new()).await,
        Err(OutboundError::NotHttps)
    );
    let https_loopback = url.replace("http://", "https://");
    assert_eq!(
        strict.post(&https_loopback, &[], Vec::new()).await,
        Err(OutboundError::NotPublic("127.0.0.1".into()))
    );
    for private in [
        "https://10.0.0.1/",
        "https://[::1]/",
        "https://169.254.169.254/",
    ] {
        assert!(matches!(
            Destinations::default().check_url(private),
            Err(OutboundError::NotPublic(_))
        ));
    }
    // A name is resolved at connection, and only public addresses are kept.
    let named = https_loopback.replace("127.0.0.1", "localhost");
    assert!(Destinations::default().check_url(&named).is_ok());
    assert!(matches!(
        strict.post(&named, &[], Vec::new()).await,
        Err(OutboundError::NotPublic(_))
    ));
    assert_eq!(taken.load(std::sync::atomic::Ordering::SeqCst), 0);
    // Allowed, it is reached.
    let named_http = url.replace("127.0.0.1", "localhost");
    let got = client(true, Duration::from_secs(5))
        .post(&named_http, &[], Vec::new())
        .await
        .unwrap();
    assert_eq!(got.status, 200);
}

#[test]
fn urls_must_be_absolute_http_without_credentials() {
    let allowed = Destinations {
        allow_private: true,
    };
    for bad in [
        "",
        "example.org/hook",
        "ftp://example.org/",
        "https://user:pw@example.org/",
    ] {
        assert!(
            matches!(allowed.check_url(bad), Err(OutboundError::NotAUrl(_))),
            "{bad}"
        );
    }
    assert!(Destinations::default()
        .check_url("https://hooks.example.org/turnhouse?x=1")
        .is_ok());
}

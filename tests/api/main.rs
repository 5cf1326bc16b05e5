//! Black-box tests: the real server over HTTP, a fresh SQLite file each.

mod bots;
mod browser;
mod concurrency;
mod cube;
mod databases;
mod errors;
mod faults;
mod frontends;
mod hardening;
mod helpers;
mod hooks;
mod hosted;
mod lobby;
mod metrics;
mod openapi;
mod players;
mod readme;
mod real_server;
mod restart;
mod sandbox;
mod scale_out;
mod sse_client;
mod streams;
mod test_games;
mod tictactoe;
mod webdriver;

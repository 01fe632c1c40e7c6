//! A program that adds scalrand only to serve its dependencies' getrandom calls: its code
//! names scalrand in one line, and uuid's v4 ids come from the pools. `N` on the command line
//! prints `N` ids (default 1).

scalrand::getrandom_backend!();

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(1);
    for _ in 0..n {
        println!("{}", uuid::Uuid::new_v4());
    }
}

//! Link flags for the `chartkit` binary.

fn main() {
    // chartkit runs as many short processes (one per `template`, `lint`, `show`...), and
    // as a position-independent executable each start spent most of a small run in the
    // dynamic loader: 70,000 relative relocations written into 1.7 MB of .data.rel.ro,
    // 400 copy-on-write page faults. Linked at a fixed address there is nothing to
    // relocate: a small `chartkit template` goes from 2.6 ms to 1.6 ms. That is how Go
    // links helm and kubectl by default; the stack, heap and shared libraries are still
    // randomised. Set CHARTKIT_BUILD_PIE=1 to build a PIE anyway.
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CHARTKIT_BUILD_PIE");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" && std::env::var_os("CHARTKIT_BUILD_PIE").is_none() {
        println!("cargo:rustc-link-arg-bin=chartkit=-no-pie");
    }
}

use std::process::ExitCode;

fn main() -> ExitCode {
    chartkit::run()
}

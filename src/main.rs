fn main() -> std::process::ExitCode {
    gza::cli::main()
}

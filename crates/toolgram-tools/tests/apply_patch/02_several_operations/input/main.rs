mod lib;
fn main() {}

mod lib;
fn main() { lib::new(); }

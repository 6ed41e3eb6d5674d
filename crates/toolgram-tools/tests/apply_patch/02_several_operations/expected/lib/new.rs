pub fn new() {}

namespace rungs::cli { int placeholder() { return 0; } }

// gone

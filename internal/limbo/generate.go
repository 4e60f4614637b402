package limbo

//go:generate go run ./gen -out .

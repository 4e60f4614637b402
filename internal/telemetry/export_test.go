package telemetry

import "go.opentelemetry.io/otel/attribute"

// SetAttributesForTest lets the encoder test put every attribute type on a span.
func (s *Session) SetAttributesForTest(kv ...attribute.KeyValue) { s.span.SetAttributes(kv...) }

"""``mx.test_utils`` (filled in below by the test-utilities work)."""

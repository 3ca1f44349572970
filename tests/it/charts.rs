//! Tests: charts.

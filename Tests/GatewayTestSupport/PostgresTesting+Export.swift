// The tests that use the gateway on PostgreSQL reach the throwaway server through this target.
@_exported import PostgresTesting

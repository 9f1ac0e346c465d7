enum _PlaceholderHeraldTesting {}

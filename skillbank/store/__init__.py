"""SQLite source of truth: schema and migrations, skills with versions, trajectories."""

"""Local replicas of real sites and APIs, and the tables they are built from (`replicas/data`)."""

"""armbench harness: everything that is not an arm, a grader or a replica."""

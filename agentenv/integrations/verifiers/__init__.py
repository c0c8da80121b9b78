"""verifiers: ``load_environment(env_id)`` returns a ``vf.Environment`` whose rubric is the env's own grader."""

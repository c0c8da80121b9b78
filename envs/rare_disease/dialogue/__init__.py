"""DiagnosisDialogue-v0: the doctor-patient env, scripted doctors and patient, and reading what each side says."""

"""The registered studies: each module here defining ``STUDY`` (a `burstbuffer.reproduce.study.Study`)
is one, found by `burstbuffer.reproduce.study.all_studies()`."""

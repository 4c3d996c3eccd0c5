"""PyFlink's ``JobStatus`` (``JobClient.get_job_status()``)."""

import enum

__all__ = ["JobStatus"]


class JobStatus(enum.Enum):
    CREATED = 0
    RUNNING = 1
    FAILING = 2
    FAILED = 3
    CANCELLING = 4
    CANCELED = 5
    FINISHED = 6
    RESTARTING = 7
    SUSPENDED = 8
    RECONCILING = 9
    INITIALIZING = 10

    def is_globally_terminal_state(self) -> bool:
        return self in (JobStatus.FAILED, JobStatus.CANCELED, JobStatus.FINISHED)

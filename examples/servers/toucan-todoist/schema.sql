CREATE TABLE `todoist` (
  `todoist_id` VARCHAR(191) NOT NULL,
  `todoist_create_task` TEXT,
  `todoist_get_tasks` TEXT,
  `content` TEXT,
  `priority` TEXT,
  `task_name` TEXT,
  `due_string` TEXT,
  `description` TEXT,
  `todoist_delete_task` TEXT,
  `todoist_complete_task` TEXT,
  PRIMARY KEY (`todoist_id`)
);

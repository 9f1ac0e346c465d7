enum _PlaceholderUserNotificationsUI {}

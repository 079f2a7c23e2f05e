import { runService } from '@tessera/common';
import { adminService } from './service';

void runService(adminService);
